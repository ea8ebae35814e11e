// One grid task, synchronously: the workload (scaled by the task's k) and the oracle
// once, then every strategy × feedback mode against a fresh server model. Runs in a
// worker thread or in-process.
import type { GridSpec, GridTask } from './grid-spec.js'
import { oracleSchedule } from './oracle.js'
import { DEFAULT_MAX_DURATION_MS, DEFAULT_ORIGIN_MS, runSimulation, type SignalPath } from './run-simulation.js'
import type { RunMetrics } from './run-metrics.js'
import type { SimStrategy } from './run-strategy.js'
import { scaleRun } from './scale-run.js'
import { createServerModel } from './servers/index.js'
import { generateWorkload } from './workload.js'

export type StrategyLookup = (name: string) => SimStrategy | undefined

export interface TaskResult {
  /** Server model name (`token-bucket-stepped`, …). */
  serverName: string
  oracleCompletionMs: number
  /** Indexed [strategy][feedback] in the spec's order. */
  runs: RunMetrics[][]
}

export function runTask(spec: GridSpec, task: GridTask, lookup: StrategyLookup, signalPath: SignalPath): TaskResult {
  const scenario = spec.scenarios[task.scenario]!
  const kind = spec.servers[task.server]!
  const clientModel = spec.clientModels[task.clientModel]!
  const { workload, quota, maxDurationMs } = scaleRun(
    { workload: generateWorkload(scenario, task.seed), quota: spec.quota, maxDurationMs: DEFAULT_MAX_DURATION_MS },
    task.scale,
  )
  const origin = DEFAULT_ORIGIN_MS
  const oracle = oracleSchedule({
    workload,
    server: createServerModel(kind, quota, origin),
    clientModel,
    rttMs: spec.rttMs,
    originMs: origin,
  })
  let serverName: string = kind
  const runs = spec.strategies.map((name) => {
    const entry = lookup(name)
    if (!entry) throw new Error(`unknown strategy '${name}'`)
    return spec.feedbacks.map((feedback) => {
      const server = createServerModel(kind, quota, origin)
      serverName = server.name
      return runSimulation({
        workload,
        server,
        feedback,
        strategy: entry.setup({ clients: scenario.clients, quota, seed: task.seed }),
        clientModel,
        signalPath,
        seed: task.seed,
        rttMs: spec.rttMs,
        originMs: origin,
        maxDurationMs,
      })
    })
  })
  return { serverName, oracleCompletionMs: oracle.completionMs, runs }
}
