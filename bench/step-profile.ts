// bench/step-profile.ts — where a run's time goes on a quota that refills in periods: the units
// admitted in each refill period (the stepped bucket's interval, 60 s × k), for the oracle and
// for each strategy, with the 429s per period and what arrived. A strategy that finishes later
// than the oracle on a capacity-bound run left units unused in some period; this shows which.
// Virtual time, deterministic; prints a table and writes JSON (bench/results/step-profile.json).
// Usage: npx tsx bench/step-profile.ts [--scenario synthetic-5c-500] [--seed 1] [--feedback retry-after]
//          [--server token-bucket-stepped] [--scale 1] [--strategy exponential,atb,aatb]
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import {
  createServerModel,
  generateWorkload,
  lookupStrategy,
  oracleSchedule,
  PAPER_QUOTA,
  REAL_SIGNAL_PATH,
  runSimulation,
  scaleRun,
  scenarioByName,
  type Feedback,
  type ServerKind,
} from '../src/sim/index.js'
import { DEFAULT_MAX_DURATION_MS, DEFAULT_ORIGIN_MS, DEFAULT_RTT_MS } from '../src/sim/run-simulation.js'

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'synthetic-5c-500' },
    seed: { type: 'string', default: '1' },
    feedback: { type: 'string', default: 'retry-after' },
    server: { type: 'string', default: 'token-bucket-stepped' },
    scale: { type: 'string', default: '1' },
    strategy: { type: 'string', default: 'exponential,atb,aatb' },
  },
})
const scenario = scenarioByName(values.scenario)
if (!scenario) throw new Error(`unknown scenario '${values.scenario}'`)
const seed = Number(values.seed)
const scale = Number(values.scale)
if (!(Number.isInteger(seed) && seed > 0)) throw new Error(`--seed must be a positive integer, got '${values.seed}'`)
if (!(scale > 0)) throw new Error(`--scale must be above 0, got '${values.scale}'`)
const feedback = values.feedback as Feedback
const kind = values.server as ServerKind
const origin = DEFAULT_ORIGIN_MS
const { workload, quota, maxDurationMs } = scaleRun(
  { workload: generateWorkload(scenario, seed), quota: PAPER_QUOTA, maxDurationMs: DEFAULT_MAX_DURATION_MS },
  scale,
)
// The scaled quota's refill interval (60 s × k for the paper's stepped bucket).
const periodMs = quota.stepIntervalMs ?? 60_000 * scale

function perPeriod(times: Iterable<number>): number[] {
  const bins: number[] = []
  for (const t of times) {
    const i = Math.floor((t - origin) / periodMs)
    for (let j = bins.length; j <= i; j++) bins.push(0)
    bins[i]!++
  }
  return bins
}

interface ProfileRow {
  name: string
  completionMs: number
  overOracle: number
  throttled: number
  admitted: number[]
  rejected: number[]
}

const oracle = oracleSchedule({ workload, server: createServerModel(kind, quota, origin), clientModel: 'paper', rttMs: DEFAULT_RTT_MS, originMs: origin })
const arrived = perPeriod(workload.clients.flatMap((c) => c.arrivalsMs.map((ms) => ms + origin)))
const rows: ProfileRow[] = [
  { name: 'oracle', completionMs: oracle.completionMs, overOracle: 1, throttled: 0, admitted: perPeriod(oracle.admittedAt.flat()), rejected: [] },
]
for (const name of values.strategy.split(',')) {
  const entry = lookupStrategy(name)
  if (!entry) throw new Error(`unknown strategy '${name}'`)
  const admitted: number[] = []
  const rejected: number[] = []
  const m = runSimulation({
    workload,
    server: createServerModel(kind, quota, origin),
    feedback,
    strategy: entry.setup({ clients: scenario.clients, quota, seed }),
    clientModel: 'paper',
    signalPath: REAL_SIGNAL_PATH,
    seed,
    rttMs: DEFAULT_RTT_MS,
    originMs: origin,
    maxDurationMs,
    trace: (a) => {
      if (a.status === 429) rejected.push(a.respondedAt)
      else if (a.status >= 200 && a.status < 300) admitted.push(a.respondedAt)
    },
  })
  rows.push({ name, completionMs: m.completionMs, overOracle: m.completionMs / oracle.completionMs, throttled: m.throttled, admitted: perPeriod(admitted), rejected: perPeriod(rejected) })
}

const periods = Math.max(...rows.map((r) => r.admitted.length), arrived.length)
const cell = (values: number[], i: number) => String(values[i] ?? 0).padStart(4)
console.log(`${scenario.name}, seed ${seed}, ${kind}, ${feedback}, k = ${scale}: units admitted per ${periodMs / 1000} s period (429s in brackets)\n`)
console.log(`${'strategy'.padEnd(12)} ${'done (s)'.padStart(9)} ${'÷ oracle'.padStart(8)} ${'429s'.padStart(5)}  ${Array.from({ length: periods }, (_, i) => `p${i}`.padStart(4)).join(' ')}`)
console.log(`${'arrived'.padEnd(12)} ${''.padStart(9)} ${''.padStart(8)} ${''.padStart(5)}  ${Array.from({ length: periods }, (_, i) => cell(arrived, i)).join(' ')}`)
for (const r of rows) {
  const admittedCells = Array.from({ length: periods }, (_, i) => cell(r.admitted, i)).join(' ')
  const rejectedCells = r.name === 'oracle' ? '' : `  [${Array.from({ length: periods }, (_, i) => r.rejected[i] ?? 0).join(' ')}]`
  console.log(`${r.name.padEnd(12)} ${(r.completionMs / 1000).toFixed(1).padStart(9)} ${r.overOracle.toFixed(3).padStart(8)} ${String(r.throttled).padStart(5)}  ${admittedCells}${rejectedCells}`)
}
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'step-profile.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify({ scenario: scenario.name, seed, server: kind, feedback, scale, periodMs, arrived, rows }, null, 2) + '\n')
console.log(`\nwrote ${out}`)
