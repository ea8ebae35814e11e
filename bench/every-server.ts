// npm run bench:every-server — fleets on every server model the simulator has, with every kind of
// feedback. The headline grid measures four server models with three kinds of feedback; a rule
// fitted there can break a server nobody measured (a sliding log with RateLimit headers met more
// 429s than exponential backoff for a day, unseen by every grid). This runs the paper's 15
// workloads (the headline's fleets) on all seven server models with status-only, Retry-After,
// RateLimit and X-RateLimit feedback, for the default `atb`, `aatb` and exponential backoff (UB,
// which honours Retry-After), and prints one line per strategy, server and feedback:
//
// - 429s ÷ UB's: the mean over the 15 workloads and the largest;
// - completion ÷ the oracle: the mean, UB's mean beside it, and the slowest workload.
//
// A line where some workload meets more 429s than exponential backoff (by at least one a run) is
// marked `!`. Virtual time, deterministic (seeds 1…N), about 30 s at 10 seeds on 2 cores.
// Writes bench/results/every-server.json (the summary lines, and each row's 429s and completion).
//
//   npm run bench:every-server [-- --seeds N]
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { normalizeSpec, PAPER_QUOTA, REFERENCE_STRATEGY } from '../src/sim/grid-spec.js'
import { textTable } from '../src/sim/live/text-table.js'
import { runGrid } from '../src/sim/run-grid.js'
import { PAPER_SCENARIOS } from '../src/sim/scenarios.js'
import { SERVER_KINDS } from '../src/sim/servers/index.js'
import type { SimRow } from '../src/sim/sim-row.js'
import type { Feedback } from '../src/sim/types.js'

const { values: flags } = parseArgs({ options: { seeds: { type: 'string', default: '10' } } })
const SEEDS = Number(flags.seeds)
if (!(Number.isInteger(SEEDS) && SEEDS >= 1)) throw new Error(`--seeds must be a whole number >= 1, got ${flags.seeds}`)

const FEEDBACKS: Feedback[] = ['status-only', 'retry-after', 'ratelimit', 'x-ratelimit']
const STRATEGIES = ['atb', 'aatb']

const spec = normalizeSpec({
  name: 'every-server',
  scenarios: [...PAPER_SCENARIOS],
  servers: [...SERVER_KINDS],
  clientModels: ['paper'],
  strategies: [REFERENCE_STRATEGY, ...STRATEGIES],
  feedbacks: FEEDBACKS,
  seeds: SEEDS,
  firstSeed: 1,
  rttMs: 20,
  quota: PAPER_QUOTA,
})

const started = Date.now()
const { rows } = await runGrid(spec)
const wallS = (Date.now() - started) / 1000

interface Line {
  strategy: string
  server: string
  feedback: Feedback
  /** Mean over the workloads of 429s ÷ UB's (a workload where UB met none counts 429s ÷ 1). */
  throttledVsUbMean: number
  throttledVsUbMax: number
  /** Whether some workload met more 429s than UB, by at least one a run. */
  aboveUb: boolean
  oracleRatioMean: number
  ubOracleRatioMean: number
  slowest: { scenario: string; oracleRatio: number; throttled: number; ubThrottled: number }
}

const ratio = (row: SimRow) => row.throttledMean / Math.max(row.ubThrottledMean, 1)
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length
const lines: Line[] = []
for (const strategy of STRATEGIES) {
  for (const server of SERVER_KINDS) {
    for (const feedback of FEEDBACKS) {
      const mine = rows.filter((r) => r.strategy === strategy && r.server === server && r.feedback === feedback)
      const ub = rows.filter((r) => r.strategy === REFERENCE_STRATEGY && r.server === server && r.feedback === feedback)
      if (mine.length === 0) continue
      const slowest = mine.reduce((a, b) => (b.oracleRatio > a.oracleRatio ? b : a))
      lines.push({
        strategy,
        server,
        feedback,
        throttledVsUbMean: mean(mine.map(ratio)),
        throttledVsUbMax: Math.max(...mine.map(ratio)),
        aboveUb: mine.some((r) => r.throttledMean >= r.ubThrottledMean + 1),
        oracleRatioMean: mean(mine.map((r) => r.oracleRatio)),
        ubOracleRatioMean: mean(ub.map((r) => r.oracleRatio)),
        slowest: { scenario: slowest.scenario, oracleRatio: slowest.oracleRatio, throttled: slowest.throttledMean, ubThrottled: slowest.ubThrottledMean },
      })
    }
  }
}

const f2 = (x: number) => x.toFixed(2)
console.log(`The paper's 15 workloads on every server model, seeds 1–${SEEDS}: 429s ÷ exponential backoff's, completion ÷ the oracle\n`)
console.log(
  textTable(
    ['strategy', 'server', 'feedback', '429s ÷ UB mean', 'max', '÷ oracle mean', 'UB', 'slowest workload'],
    lines.map((l) => [
      l.strategy,
      l.server,
      l.feedback,
      f2(l.throttledVsUbMean),
      `${f2(l.throttledVsUbMax)}${l.aboveUb ? ' !' : ''}`,
      l.oracleRatioMean.toFixed(3),
      l.ubOracleRatioMean.toFixed(3),
      `${l.slowest.scenario} ${l.slowest.oracleRatio.toFixed(3)} (429s ${l.slowest.throttled.toFixed(0)} / UB ${l.slowest.ubThrottled.toFixed(0)})`,
    ]),
  ),
)
const above = lines.filter((l) => l.aboveUb)
console.log(`\n${above.length} of ${lines.length} lines meet more 429s than exponential backoff on some workload (by one a run or more); ${rows.length} rows in ${wallS.toFixed(1)} s`)
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'every-server.json')
mkdirSync(dirname(out), { recursive: true })
const brief = rows.map((r) => ({
  strategy: r.strategy,
  scenario: r.scenario,
  server: r.server,
  feedback: r.feedback,
  throttledMean: r.throttledMean,
  throttledCi95: r.throttledCi95,
  oracleRatio: r.oracleRatio,
  oracleRatioCi95: r.oracleRatioCi95,
  incompleteRuns: r.incompleteRuns,
}))
writeFileSync(out, `${JSON.stringify({ seeds: SEEDS, quota: PAPER_QUOTA, wallS, lines, rows: brief }, null, 2)}\n`)
console.log(`wrote ${out}`)
