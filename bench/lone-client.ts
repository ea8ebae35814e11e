// npm run bench:lone-client — one client alone on a quota, on every server model the simulator
// has, with every kind of feedback, at four time scales. The grids measure fleets sharing a
// quota; this is the other everyday case: a script or a page that is the quota's only user and
// fires a batch at it (300 calls at once against 100 per 75·k s: three windows' worth).
//
// Pure virtual time and deterministic (seed 1): the shipped `atb()` and exponential backoff (UB,
// which honours Retry-After) driven by the simulator (`runSimulation`, the real signal path),
// each run against its own fresh server model, completion judged against the oracle
// (`oracleSchedule`: the earliest each call could have gone). Two client models: `concurrent`
// (8 in flight, a Promise.all) and `paper` (one at a time, a loop awaiting each call).
//
// Each cell: completion ÷ the oracle, and the run's 429s. A scale-free client reads alike across
// a row (every time × k). Writes bench/results/lone-client.json.
//
//   npm run bench:lone-client [-- --calls N]
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { atb, exponential } from '../src/core/pacers/index.js'
import type { Strategy } from '../src/core/types.js'
import type { ClientModel } from '../src/sim/client-model.js'
import { textTable } from '../src/sim/live/text-table.js'
import { oracleSchedule } from '../src/sim/oracle.js'
import { DEFAULT_ORIGIN_MS, runSimulation } from '../src/sim/run-simulation.js'
import { createServerModel, SERVER_KINDS } from '../src/sim/servers/index.js'
import { REAL_SIGNAL_PATH } from '../src/sim/signal-path.js'
import type { Feedback, ServerKind } from '../src/sim/types.js'
import type { Workload } from '../src/sim/workload.js'

const { values: flags } = parseArgs({ options: { calls: { type: 'string', default: '300' } } })
const CALLS = Number(flags.calls)
if (!(Number.isInteger(CALLS) && CALLS > 0)) throw new Error(`--calls must be a positive integer, got ${flags.calls}`)

/** The paper's quota (100 per 75 s), every time × k. */
const CAPACITY = 100
const PER_MINUTE_AT_K1 = 80
const SCALES = [0.1, 1, 10, 60]
const FEEDBACKS: Feedback[] = ['status-only', 'retry-after', 'ratelimit', 'x-ratelimit']
const MODELS: ClientModel[] = ['concurrent', 'paper']

interface Cell {
  scale: number
  /** Completion ÷ the oracle's. */
  atb: number
  atb429s: number
  ub: number
  ub429s: number
  oracleMs: number
}

function quotaAt(kind: ServerKind, k: number) {
  // A stepped bucket refills every 60·k s (the paper's Envoy step), stretched like every other time.
  return () => createServerModel(kind, { capacity: CAPACITY, perMinute: PER_MINUTE_AT_K1 / k, stepIntervalMs: 60_000 * k }, DEFAULT_ORIGIN_MS)
}

function cell(kind: ServerKind, feedback: Feedback, model: ClientModel, k: number): Cell {
  const workload: Workload = { scenario: 'lone-client', requests: CALLS, clients: [{ id: 0, startMs: 0, arrivalsMs: new Array<number>(CALLS).fill(0) }] }
  const server = quotaAt(kind, k)
  const oracleMs = oracleSchedule({ workload, server: server(), clientModel: model }).completionMs
  const run = (strategy: Strategy) => {
    const metrics = runSimulation({
      workload,
      server: server(),
      feedback,
      strategy: { strategy },
      clientModel: model,
      signalPath: REAL_SIGNAL_PATH,
      seed: 1,
      // Far beyond any run's need: an unfinished run is a defect, not a slow result.
      maxDurationMs: 400 * 75_000 * k,
    })
    if (metrics.incomplete) throw new Error(`bench:lone-client: ${strategy.name} did not finish (${kind}, ${feedback}, ${model}, k = ${k})`)
    return metrics
  }
  const a = run(atb())
  const u = run(exponential())
  const ratio = (ms: number) => +(ms / oracleMs).toFixed(2)
  return { scale: k, atb: ratio(a.completionMs), atb429s: a.throttled, ub: ratio(u.completionMs), ub429s: u.throttled, oracleMs }
}

const rows = SERVER_KINDS.flatMap((server) =>
  FEEDBACKS.flatMap((feedback) => MODELS.map((model) => ({ server, feedback, model, cells: SCALES.map((k) => cell(server, feedback, model, k)) }))),
)

console.log(`${CALLS} calls at once from one client against 100 per 75·k s; each cell: completion ÷ oracle / 429s\n`)
console.log(
  textTable(
    ['server', 'feedback', 'client', ...SCALES.flatMap((k) => [`atb k=${k}`, `UB k=${k}`])],
    rows.map((r) => [r.server, r.feedback, r.model, ...r.cells.flatMap((c) => [`${c.atb.toFixed(2)} / ${c.atb429s}`, `${c.ub.toFixed(2)} / ${c.ub429s}`])]),
  ),
)
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'lone-client.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify({ calls: CALLS, capacity: CAPACITY, perMinuteAtK1: PER_MINUTE_AT_K1, seed: 1, rows }, null, 2)}\n`)
console.log(`\nwrote ${out}`)
