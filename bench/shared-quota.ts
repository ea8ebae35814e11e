// npm run bench:shared-quota — the core issue's shared-quota benchmark, over real HTTP.
//
// Sequential clients (one request in flight each, unlimited retries) share one local
// continuous token-bucket quota with Poisson arrivals totalling 1.6x what the quota
// admits over the arrival window. Two configurations:
// - paper: 20 clients, 100 tokens refilling 80/min, 800 requests over 300 s, model time
//   x20 (TIME_SCALE) on client and server through one shared clock;
// - fast: 20 clients, 20 tokens refilling 10/s, 512 requests over 30 s (1.6 x the
//   20 + 10 x 30 the quota admits), in real time (FAST_TIME_SCALE, default 1), the start
//   stagger shrunk with the window as the simulator's scaling does.
// Baseline: the paper's UB (exponential backoff, never before Retry-After when the
// server sends one). Median over the seeds (--seeds, default 5) per configuration, feedback
// mode and strategy; --parallel N runs at most N of a mode at once (default all; see below).
//
//   npm run bench:shared-quota -- [--config paper|fast] [--seeds N] [--max-wall-s S] [--parallel N] [--virtual]
//
// --virtual runs the same workloads, quotas, strategies and verdicts through the simulator in
// virtual time instead (the shipped pacers on the simulator's continuous token bucket and header
// path, 20 ms round trip) in a few seconds, for working on a line before the real-time run that
// proves it; it writes bench/results/shared-quota-virtual.json (and shared-quota-fast-virtual.json)
// and leaves the real-HTTP files alone.
//
// Each configuration writes its own file (paper: bench/results/shared-quota.json, fast:
// shared-quota-fast.json). Why a bound: the fast configuration runs in real time and its
// clients never give up, so a pacer that drains a backlog slowly keeps a run going for as
// long as it paces, and the four modes run one after another, each as long as its slowest
// run (a polite-fetch run of it took 110-195 s on the pacer of 2 December 2026, the
// baseline 50-65 s: 18 min for 3 seeds two at a time). Every run is cut off after
// --max-wall-s (default 10 x the arrival window in wall time) and an incomplete run is a
// miss. CONFIGS=paper or CONFIGS=fast (the old spelling of --config) still works.
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { atb, exponential } from '../src/core/pacers/index.js'
import { runLiveWorkload, type LiveRow } from '../src/sim/live/run-live-workload.js'
import { textTable } from '../src/sim/live/text-table.js'
import { resultRow, type ResultRow } from '../src/sim/result-row.js'
import { PAPER_WINDOW_MS, syntheticScenario, type Scenario } from '../src/sim/scenarios.js'
import type { Feedback, QuotaConfig } from '../src/sim/types.js'
import { generateWorkload, type Workload } from '../src/sim/workload.js'
import { runSimulation } from '../src/sim/run-simulation.js'
import { createServerModel } from '../src/sim/servers/index.js'
import { REAL_SIGNAL_PATH } from '../src/sim/signal-path.js'

const { values: flags } = parseArgs({
  options: {
    config: { type: 'string', default: process.env.CONFIGS ?? 'paper,fast' },
    seeds: { type: 'string', default: '5' },
    'max-wall-s': { type: 'string' },
    parallel: { type: 'string' },
    virtual: { type: 'boolean', default: false },
  },
})
const virtual = flags.virtual === true
const seedCount = Number(flags.seeds)
if (!(Number.isInteger(seedCount) && seedCount >= 1)) throw new Error(`--seeds must be a whole number >= 1, got ${flags.seeds}`)
const SEEDS = Array.from({ length: seedCount }, (_, i) => i + 1)
// Runs of one mode that go at once (default: all of them). On a loaded machine ten runs in one
// process starve their own clients: the clients, not the quota, then set the pace (fewer 429s for
// every strategy, longer completion for all alike), so a loaded run needs a smaller number here.
const parallel = flags.parallel === undefined ? Infinity : Number(flags.parallel)
if (!(parallel >= 1)) throw new Error(`--parallel must be >= 1, got ${flags.parallel}`)
const MODES: Feedback[] = ['status-only', 'retry-after', 'ratelimit', 'x-ratelimit']

interface Config {
  name: string
  description: string
  scenario: Scenario
  quota: QuotaConfig
  timeScale: number
  /** Where this configuration's rows go. */
  output: string
  workload(seed: number): Workload
}

/** The paper's stagger ((id × 0.5) mod 10 s) is for a 300 s window: shrink it with the window. */
function staggerScaled(scenario: Scenario, seed: number): Workload {
  const workload = generateWorkload(scenario, seed)
  const factor = scenario.windowMs / PAPER_WINDOW_MS
  return {
    ...workload,
    clients: workload.clients.map((c) => {
      const shift = c.startMs * (1 - factor)
      return { ...c, startMs: c.startMs - shift, arrivalsMs: c.arrivalsMs.map((t) => t - shift) }
    }),
  }
}

const paper = syntheticScenario(20, 800)
const fast = syntheticScenario(20, 512, 30_000)
const ALL_CONFIGS: Config[] = [
  {
    name: 'paper',
    description: '20 sequential clients, 800 requests / 300 s, token bucket 100 @ 80/min continuous',
    scenario: paper,
    quota: { capacity: 100, perMinute: 80 },
    timeScale: Number(process.env.TIME_SCALE ?? 20),
    output: 'bench/results/shared-quota.json',
    workload: (seed) => generateWorkload(paper, seed),
  },
  {
    name: 'fast',
    description: '20 sequential clients, 512 requests / 30 s, token bucket 20 @ 10/s continuous',
    scenario: fast,
    quota: { capacity: 20, perMinute: 600 },
    timeScale: Number(process.env.FAST_TIME_SCALE ?? 1),
    output: 'bench/results/shared-quota-fast.json',
    workload: (seed) => staggerScaled(fast, seed),
  },
]
const wanted = flags.config.split(',')
const unknown = wanted.filter((name) => !ALL_CONFIGS.some((c) => c.name === name))
if (unknown.length > 0) throw new Error(`--config: unknown ${unknown.join(', ')} (paper, fast)`)
const CONFIGS = ALL_CONFIGS.filter((c) => wanted.includes(c.name))

/** The wall-clock bound on one run (see the header): the flag, or 10 arrival windows. */
function maxWallMs(config: Config): number {
  if (flags['max-wall-s'] !== undefined) {
    const seconds = Number(flags['max-wall-s'])
    if (!(seconds > 0)) throw new Error(`--max-wall-s must be positive, got ${flags['max-wall-s']}`)
    return seconds * 1000
  }
  return (10 * config.scenario.windowMs) / config.timeScale
}

/** The machine is shared: each configuration's file carries the load averages around its runs. */
const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')

const strategies = [
  { name: 'exponential', make: (_config: Config) => exponential() },
  { name: 'polite-fetch', make: (_config: Config) => atb() },
  // The default told the quota's rate (atb's `quotaPerSecond`), as a user who knows it sets it.
  { name: 'polite-fetch, rate given', make: (config: Config) => atb({ quotaPerSecond: config.quota.perMinute / 60 }) },
]
/** The strategies judged against exponential backoff. */
const JUDGED = ['polite-fetch', 'polite-fetch, rate given']

/** Runs `tasks` with at most `limit` pending at once; results in task order. */
async function inBatches<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++
      results[index] = await tasks[index]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker))
  return results
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

interface BenchRow extends ResultRow {
  config: string
  seeds: number
  throttledPct: number
  /** Runs the wall-clock bound cut off (their completion is then a lower bound). */
  incompleteRuns: number
}

interface RunRecord {
  strategy: string
  feedback: Feedback
  seed: number
  attempts: number
  throttled: number
  completionMs: number
  completed: number
  wallMs: number
}

/** The runs of one mode in the simulator: same workloads, quota and pacers, virtual time (--virtual). */
function virtualRuns(config: Config, feedback: Feedback): LiveRow[] {
  const origin = Date.UTC(2025, 0, 1)
  return strategies.flatMap((s) =>
    SEEDS.map((seed) => {
      const started = performance.now()
      const m = runSimulation({
        workload: config.workload(seed),
        server: createServerModel('token-bucket-continuous', config.quota, origin),
        feedback,
        strategy: { strategy: s.make(config) },
        clientModel: 'paper',
        signalPath: REAL_SIGNAL_PATH,
        seed,
        originMs: origin,
        // The real run's wall-clock bound, in model time.
        maxDurationMs: maxWallMs(config) * config.timeScale,
      })
      const row = resultRow({ strategy: s.name, feedback, clients: config.scenario.clients, requests: m.requests, attempts: m.attempts, throttled: m.throttled, completionMs: m.completionMs })
      return { ...row, seed, wallMs: performance.now() - started, completed: m.completed }
    }),
  )
}

/** Every run of one configuration, one feedback mode after another. */
async function runConfig(config: Config): Promise<{ rows: BenchRow[]; runs: RunRecord[] }> {
  const rows: BenchRow[] = []
  const records: RunRecord[] = []
  for (const feedback of MODES) {
    process.stderr.write(`${config.name}, ${feedback}: ${SEEDS.length} seeds x ${strategies.length} strategies (load ${load()})…\n`)
    // The runs of one mode, --parallel at a time, each against its own quota server.
    const tasks = strategies.flatMap((s) =>
      SEEDS.map(
        (seed) => () =>
          runLiveWorkload({
            scenario: config.scenario,
            workload: config.workload(seed),
            seed,
            feedback,
            quota: config.quota,
            timeScale: config.timeScale,
            strategyName: s.name,
            strategy: s.make(config),
            maxWallMs: maxWallMs(config),
          }),
      ),
    )
    const runs = virtual ? virtualRuns(config, feedback) : await inBatches(tasks, parallel)
    for (const r of runs) {
      const { strategy, seed, attempts, throttled, completionMs, completed, wallMs } = r
      records.push({ strategy, feedback, seed, attempts, throttled, completionMs, completed, wallMs })
    }
    for (const s of strategies) {
      const mine = runs.filter((r: LiveRow) => r.strategy === s.name)
      const row = resultRow({
        strategy: s.name,
        feedback,
        clients: mine[0]!.clients,
        requests: mine[0]!.requests,
        attempts: median(mine.map((r) => r.attempts)),
        throttled: median(mine.map((r) => r.throttled)),
        completionMs: median(mine.map((r) => r.completionMs)),
      })
      const incompleteRuns = mine.filter((r) => r.completed < r.requests).length
      rows.push({ config: config.name, ...row, seeds: SEEDS.length, throttledPct: +((row.throttled / row.attempts) * 100).toFixed(2), incompleteRuns })
    }
  }
  return { rows, runs: records }
}

function verdictsOf(rows: BenchRow[], strategy: string) {
  return MODES.map((feedback) => {
    const ub = rows.find((r) => r.feedback === feedback && r.strategy === 'exponential')!
    const pf = rows.find((r) => r.feedback === feedback && r.strategy === strategy)!
    const fewerPct = ub.throttled === 0 ? 0 : (1 - pf.throttled / ub.throttled) * 100
    const longerPct = (pf.completionMs / ub.completionMs - 1) * 100
    // The core issue's targets: fewer 429s than UB by a percentage, or a share of attempts;
    // a run cut off by the wall-clock bound is a miss (as the simulator's scale grid counts it).
    const minFewerPct = feedback === 'status-only' ? 80 : feedback === 'retry-after' ? 95 : undefined
    const maxThrottledPct = 1
    const complete = pf.incompleteRuns === 0 && ub.incompleteRuns === 0
    const pass = complete && longerPct <= 30 && (minFewerPct !== undefined ? fewerPct >= minFewerPct : pf.throttledPct <= maxThrottledPct)
    const goal = minFewerPct !== undefined ? `>= ${minFewerPct}% fewer` : `<= ${maxThrottledPct}% of attempts`
    return { config: pf.config, strategy, feedback, fewerPct: +fewerPct.toFixed(1), longerPct: +longerPct.toFixed(1), throttledPct: pf.throttledPct, goal, complete, pass }
  })
}

for (const config of CONFIGS) {
  const loadBefore = load()
  const started = performance.now()
  const { rows, runs } = await runConfig(config)
  const wallS = Math.round((performance.now() - started) / 1000)
  const loadAfter = load()
  const verdicts = JUDGED.flatMap((strategy) => verdictsOf(rows, strategy))
  const atOnce = Number.isFinite(parallel) ? `${parallel} runs at once` : 'all runs of a mode at once'
  const how = virtual ? 'virtual time (simulator)' : `time x${config.timeScale}, ${atOnce}`
  console.log(`\n${config.name}: ${config.description}, ${how}, ${SEEDS.length} seeds, ${wallS} s wall; load average ${loadBefore} before, ${loadAfter} after`)
  console.log(
    textTable(
      ['strategy', 'feedback', 'clients', 'requests', 'attempts', '429s', '429 % of attempts', 'completion s', 'cut-off runs'],
      rows.map((r) => [r.strategy, r.feedback, r.clients, r.requests, r.attempts, r.throttled, r.throttledPct, +(r.completionMs / 1000).toFixed(1), r.incompleteRuns]),
    ),
  )
  console.log()
  console.log(
    textTable(
      ['strategy', 'feedback', '429s vs UB', 'completion vs UB', '429 % of attempts', 'target (429s; completion <= +30%)', 'pass'],
      verdicts.map((v) => [v.strategy, v.feedback, `-${v.fewerPct}%`, `${v.longerPct >= 0 ? '+' : ''}${v.longerPct}%${v.complete ? '' : ' (cut off)'}`, v.throttledPct, v.goal, v.pass ? 'yes' : 'NO']),
    ),
  )
  mkdirSync('bench/results', { recursive: true })
  const output = virtual ? config.output.replace(/\.json$/, '-virtual.json') : config.output
  const meta = { name: config.name, description: config.description, timeScale: config.timeScale, maxWallMs: maxWallMs(config), parallel: Number.isFinite(parallel) ? parallel : 'all' }
  writeFileSync(output, `${JSON.stringify({ config: { ...meta, virtual }, seeds: SEEDS, wallS, loadAverage: { before: loadBefore, after: loadAfter }, rows, verdicts, runs }, null, 2)}\n`)
  console.log(`\nwrote ${output}`)
}
