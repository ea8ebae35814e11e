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
// server sends one). Median of 5 seeds per configuration, feedback mode and strategy.
// CONFIGS=paper or CONFIGS=fast runs one of them.
import { mkdirSync, writeFileSync } from 'node:fs'
import { atb, exponential } from '../src/core/pacers/index.js'
import { runLiveWorkload, type LiveRow } from '../src/sim/live/run-live-workload.js'
import { textTable } from '../src/sim/live/text-table.js'
import { resultRow, type ResultRow } from '../src/sim/result-row.js'
import { PAPER_WINDOW_MS, syntheticScenario, type Scenario } from '../src/sim/scenarios.js'
import type { Feedback, QuotaConfig } from '../src/sim/types.js'
import { generateWorkload, type Workload } from '../src/sim/workload.js'

const SEEDS = [1, 2, 3, 4, 5]
const MODES: Feedback[] = ['status-only', 'retry-after', 'ratelimit', 'x-ratelimit']

interface Config {
  name: string
  description: string
  scenario: Scenario
  quota: QuotaConfig
  timeScale: number
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
    workload: (seed) => generateWorkload(paper, seed),
  },
  {
    name: 'fast',
    description: '20 sequential clients, 512 requests / 30 s, token bucket 20 @ 10/s continuous',
    scenario: fast,
    quota: { capacity: 20, perMinute: 600 },
    timeScale: Number(process.env.FAST_TIME_SCALE ?? 1),
    workload: (seed) => staggerScaled(fast, seed),
  },
]
const CONFIGS = ALL_CONFIGS.filter((c) => process.env.CONFIGS === undefined || process.env.CONFIGS.split(',').includes(c.name))

const strategies = [
  { name: 'exponential', make: () => exponential() },
  { name: 'polite-fetch', make: () => atb() },
]

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

interface BenchRow extends ResultRow {
  config: string
  seeds: number
  throttledPct: number
}

const rows: BenchRow[] = []
for (const config of CONFIGS) {
  for (const feedback of MODES) {
    process.stderr.write(`${config.name}, ${feedback}: ${SEEDS.length} seeds x ${strategies.length} strategies…\n`)
    // All runs of one mode at once, each against its own quota server.
    const runs = await Promise.all(
      strategies.flatMap((s) =>
        SEEDS.map((seed) =>
          runLiveWorkload({
            scenario: config.scenario,
            workload: config.workload(seed),
            seed,
            feedback,
            quota: config.quota,
            timeScale: config.timeScale,
            strategyName: s.name,
            strategy: s.make(),
          }),
        ),
      ),
    )
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
      rows.push({ config: config.name, ...row, seeds: SEEDS.length, throttledPct: +((row.throttled / row.attempts) * 100).toFixed(2) })
    }
  }
}

const verdicts = CONFIGS.flatMap((config) =>
  MODES.map((feedback) => {
    const ub = rows.find((r) => r.config === config.name && r.feedback === feedback && r.strategy === 'exponential')!
    const pf = rows.find((r) => r.config === config.name && r.feedback === feedback && r.strategy === 'polite-fetch')!
    const fewerPct = ub.throttled === 0 ? 0 : (1 - pf.throttled / ub.throttled) * 100
    const longerPct = (pf.completionMs / ub.completionMs - 1) * 100
    // The core issue's targets: fewer 429s than UB by a percentage, or a share of attempts.
    const minFewerPct = feedback === 'status-only' ? 80 : feedback === 'retry-after' ? 95 : undefined
    const maxThrottledPct = 1
    const pass = longerPct <= 30 && (minFewerPct !== undefined ? fewerPct >= minFewerPct : pf.throttledPct <= maxThrottledPct)
    const goal = minFewerPct !== undefined ? `>= ${minFewerPct}% fewer` : `<= ${maxThrottledPct}% of attempts`
    return { config: config.name, feedback, fewerPct: +fewerPct.toFixed(1), longerPct: +longerPct.toFixed(1), throttledPct: pf.throttledPct, goal, pass }
  }),
)

console.log(
  textTable(
    ['config', 'strategy', 'feedback', 'clients', 'requests', 'attempts', '429s', '429 % of attempts', 'completion s'],
    rows.map((r) => [r.config, r.strategy, r.feedback, r.clients, r.requests, r.attempts, r.throttled, r.throttledPct, +(r.completionMs / 1000).toFixed(1)]),
  ),
)
console.log()
console.log(
  textTable(
    ['config', 'feedback', '429s vs UB', 'completion vs UB', '429 % of attempts', 'target (429s; completion <= +30%)', 'pass'],
    verdicts.map((v) => [v.config, v.feedback, `-${v.fewerPct}%`, `${v.longerPct >= 0 ? '+' : ''}${v.longerPct}%`, v.throttledPct, v.goal, v.pass ? 'yes' : 'NO']),
  ),
)
mkdirSync('bench/results', { recursive: true })
writeFileSync(
  'bench/results/shared-quota.json',
  `${JSON.stringify({ configs: CONFIGS.map((c) => ({ name: c.name, description: c.description, timeScale: c.timeScale })), seeds: SEEDS, rows, verdicts }, null, 2)}\n`,
)
console.log('\nwrote bench/results/shared-quota.json')
