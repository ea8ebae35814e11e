// bench/scale-sensitivity.ts — how sharply the default ATB's k = 1 fit depends on its time scale
// and on each of its values. The scale grid's status-only and Retry-After cells (paper clients,
// continuous and stepped refill, k = 0.1, 1, 10, 60) for `atb-known-scale` (the default told the
// quota's true scale: the ceiling of any way a lane measures its scale), then the same with the
// told scale off by a factor (`atb-known-scale:scale*F`) and with one value at a time off by a
// factor on the true scale (`atb-known-scale:KEY*F`). A lane that measures its own scale reads it
// with an error; the table says what an error of F costs, in total and per value.
// Virtual time, deterministic; prints a table and writes JSON (bench/results/scale-sensitivity.json).
// Usage: npx tsx bench/scale-sensitivity.ts [--seeds 10] [--factors 0.5,2] [--keys growthPerSecond,…]
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { normalizeSpec, namedGrid, runGrid, type Feedback } from '../src/sim/index.js'
import { scaleVerdicts } from '../src/sim/report/scale-verdict.js'

/** Every duration and rate of atb (options and internal constants) that runs on the lane's time scale. */
const SCALED_KEYS = [
  'growthPerSecond',
  'minRatePerSecond',
  'coldStartRatePerSecond',
  'minSpanMs',
  'plateauMs',
  'steadyPlateauMs',
  'lumpPlateauMs',
  'maxRetryBackoffMs',
  'calmAfterMs',
  'windowMs',
  'dryLaneWindowMs',
  'steadyWindowMs',
  'steadyGrowthDoublingMs',
  'paceWindowMs',
]
const FEEDBACKS: Feedback[] = ['status-only', 'retry-after']

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '10' },
    factors: { type: 'string', default: '0.5,2' },
    keys: { type: 'string', default: ['scale', ...SCALED_KEYS].join(',') },
  },
})
const seeds = Number(values.seeds)
if (!(Number.isInteger(seeds) && seeds >= 1)) throw new Error(`--seeds must be a whole number >= 1, got '${values.seeds}'`)
const factors = values.factors.split(',').map(Number)
if (factors.some((f) => !(f > 0))) throw new Error(`--factors takes positive numbers, got '${values.factors}'`)
const keys = values.keys.split(',').filter((k) => k.length > 0)

const base = 'atb-known-scale'
const variants = keys.flatMap((key) => factors.map((factor) => `${base}:${key}*${factor}`))
const strategies = [base, ...variants]
const started = performance.now()
const spec = normalizeSpec({ ...namedGrid('scale', seeds, strategies), strategies, feedbacks: FEEDBACKS })
const { rows } = await runGrid(spec)
const verdicts = new Map(scaleVerdicts(rows).map((v) => [v.strategy, v]))

/** Cells passing per refill × feedback group, summed over the scales. */
function byGroup(strategy: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const g of verdicts.get(strategy)!.groups) {
    const [server, feedback] = g.group.split(' ')
    out[`${server!.replace('token-bucket-', '')} ${feedback}`] = g.byScale.reduce((n, s) => n + s.passing, 0)
  }
  return out
}

const reference = verdicts.get(base)!
const groups = Object.keys(byGroup(base))
const results = strategies.map((strategy) => {
  const v = verdicts.get(strategy)!
  return { strategy, passing: v.passing, cells: v.cells, delta: v.passing - reference.passing, groups: byGroup(strategy) }
})

const name = (s: string) => (s === base ? `${base} (true scale)` : s.slice(base.length + 1))
const width = Math.max(...results.map((r) => name(r.strategy).length))
console.log(`\nscale-sensitivity — ${seeds} seeds, paper clients, ${FEEDBACKS.join(' and ')}, k = ${spec.scales?.join(', ')}; cells passing (of ${reference.cells}), per group summed over k (of 60 each)\n`)
console.log(`${'variant'.padEnd(width)}  passing      Δ  ${groups.map((g) => g.padStart(24)).join('')}`)
for (const r of results) {
  console.log(`${name(r.strategy).padEnd(width)}  ${String(r.passing).padStart(7)}  ${(r.delta > 0 ? `+${r.delta}` : String(r.delta)).padStart(5)}  ${groups.map((g) => String(r.groups[g]).padStart(24)).join('')}`)
}
const seconds = (performance.now() - started) / 1000
console.log(`\n${rows.length} rows in ${seconds.toFixed(1)} s`)

const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'scale-sensitivity.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify({ seeds, feedbacks: FEEDBACKS, scales: spec.scales, factors, results }, null, 2)}\n`)
console.log(`wrote ${out}`)
