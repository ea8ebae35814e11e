// npm run bench:wait-consistency — does a lane's wait ever sleep through an opening its own rules
// would grant? A pacer's `delayMs(now)` is pure: the shells (and the simulator) sleep for what it
// says and ask again. If asking again partway through that wait would have said "go" much sooner,
// the lane slept through an opening: quota left idle, and in the shells a call rejected for a
// deadline it could have met. Found this way: a RateLimit lane on a stepped bucket whose aged
// hint read empty slept its longest spacing through the step (docs/algorithms.md, "A wait ends at
// a lumpy reset").
//
// Virtual time, the paper client model (one call at a time per client: nothing else reaches a
// waiting lane, so the same pacer state answers at every instant of its wait). Every wait D > 0 of
// the real pacers (`atb`, `aatb`) is probed at 10%, 25%, 50%, 75%, 90% and 99% of it; a probe whose
// own earliest send comes more than a tenth of D sooner counts once. Per line: the waits, those
// that sleep through, and the time they would have saved, in all and as a share of all the time
// spent waiting. Writes bench/results/wait-consistency.json.
//
//   npm run bench:wait-consistency [-- --seeds N]
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { Pacer, Strategy } from '../src/core/types.js'
import {
  createServerModel,
  generateWorkload,
  lookupStrategy,
  PAPER_QUOTA,
  REAL_SIGNAL_PATH,
  runSimulation,
  scaleRun,
  scenarioByName,
  type Feedback,
  type ServerKind,
} from '../src/sim/index.js'
import { DEFAULT_MAX_DURATION_MS, DEFAULT_ORIGIN_MS, DEFAULT_RTT_MS } from '../src/sim/run-simulation.js'
import { textTable } from '../src/sim/live/text-table.js'

const { values: flags } = parseArgs({ options: { seeds: { type: 'string', default: '2' } } })
const SEEDS = Number(flags.seeds)
if (!(Number.isInteger(SEEDS) && SEEDS > 0)) throw new Error(`--seeds must be a positive integer, got ${flags.seeds}`)

const SCENARIOS = ['synthetic-5c-600', 'synthetic-100c-500', 'synthetic-100c-800', 'real-trace-700']
const SERVERS: ServerKind[] = ['token-bucket-continuous', 'token-bucket-stepped', 'fixed-window', 'sliding-window-counter']
const FEEDBACKS: Feedback[] = ['status-only', 'retry-after', 'ratelimit', 'x-ratelimit']
const STRATEGIES = ['atb', 'aatb']
const PROBES = [0.1, 0.25, 0.5, 0.75, 0.9, 0.99]
/** A probe that opens sooner by less than this share of the wait is rounding, not a missed opening. */
const SOONER_SHARE = 0.1

interface Tally {
  waits: number
  waitedMs: number
  sleptThrough: number
  lostMs: number
}

/** The strategy with every pacer it creates checked at each wait it asks for. */
function checked(strategy: Strategy, tally: Tally): Strategy {
  return {
    ...strategy,
    create(init) {
      const pacer: Pacer = strategy.create(init)
      const delayMs = pacer.delayMs.bind(pacer)
      pacer.delayMs = (now, cost) => {
        const waitMs = delayMs(now, cost)
        if (waitMs > 0) {
          tally.waits++
          tally.waitedMs += waitMs
          for (const share of PROBES) {
            const at = now + waitMs * share
            const soonerMs = now + waitMs - (at + delayMs(at, cost))
            if (soonerMs > SOONER_SHARE * waitMs) {
              tally.sleptThrough++
              tally.lostMs += soonerMs
              break
            }
          }
        }
        return waitMs
      }
      return pacer
    },
  }
}

const rows: Array<Tally & { server: ServerKind; feedback: Feedback; strategy: string }> = []
for (const server of SERVERS) {
  for (const feedback of FEEDBACKS) {
    for (const name of STRATEGIES) {
      const tally: Tally = { waits: 0, waitedMs: 0, sleptThrough: 0, lostMs: 0 }
      for (const scenarioName of SCENARIOS) {
        const scenario = scenarioByName(scenarioName)
        if (!scenario) throw new Error(`unknown scenario '${scenarioName}'`)
        for (let seed = 1; seed <= SEEDS; seed++) {
          const { workload, quota, maxDurationMs } = scaleRun({ workload: generateWorkload(scenario, seed), quota: PAPER_QUOTA, maxDurationMs: DEFAULT_MAX_DURATION_MS }, 1)
          const setup = lookupStrategy(name)!.setup({ clients: scenario.clients, quota, seed })
          runSimulation({
            workload,
            server: createServerModel(server, quota, DEFAULT_ORIGIN_MS),
            feedback,
            strategy: { ...setup, strategy: checked(setup.strategy, tally) },
            clientModel: 'paper',
            signalPath: REAL_SIGNAL_PATH,
            seed,
            rttMs: DEFAULT_RTT_MS,
            originMs: DEFAULT_ORIGIN_MS,
            maxDurationMs,
          })
        }
      }
      rows.push({ server, feedback, strategy: name, ...tally })
    }
  }
}

const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–')
console.log(`Waits that sleep through an opening (paper clients, ${SCENARIOS.length} workloads × ${SEEDS} seeds, k = 1)\n`)
console.log(
  textTable(
    ['server', 'feedback', 'strategy', 'waits', 'slept through', 'share', 'time lost s', 'of all waiting'],
    rows.map((r) => [r.server, r.feedback, r.strategy, r.waits, r.sleptThrough, pct(r.sleptThrough, r.waits), Math.round(r.lostMs / 1000), pct(r.lostMs, r.waitedMs)]),
  ),
)
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'wait-consistency.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify({ scenarios: SCENARIOS, seeds: SEEDS, probes: PROBES, soonerShare: SOONER_SHARE, rows }, null, 2)}\n`)
console.log(`\nwrote ${out}`)
