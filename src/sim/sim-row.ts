// Seeds → one row per (scenario, scale, server, client model, strategy, feedback), in the
// paper's terms: means over seeds with 95% CIs, and the change against UB (the
// `exponential` strategy on the same scenario, server, client model and feedback,
// over the same seeds, hence the same arrivals).
import type { ClientModel } from './client-model.js'
import { REFERENCE_STRATEGY, type GridSpec, type GridTask } from './grid-spec.js'
import type { ResultRow } from './result-row.js'
import type { RunMetrics } from './run-metrics.js'
import type { TaskResult } from './run-task.js'
import type { ScenarioFamily } from './scenarios.js'
import { ci95HalfWidth, mean } from './statistics.js'

export interface SimRow extends ResultRow {
  scenario: string
  family: ScenarioFamily
  /** Time scale k of the run (quota rate ÷ k, times × k); 1 is the paper's. */
  scale: number
  /** Server model and refill: `token-bucket-continuous`, `token-bucket-stepped`, `leaky-bucket`, … */
  server: string
  clientModel: ClientModel
  seeds: number
  // ResultRow's attempts / throttled / completionMs are the means over seeds.
  attemptsCi95: number
  throttledMean: number
  throttledCi95: number
  completionMsMean: number
  completionMsCi95: number
  /** UB's mean 429s and completion on the same scenario, server, client model and feedback. */
  ubThrottledMean: number
  ubCompletionMsMean: number
  /** (throttled − UB) / UB × 100: negative = fewer 429s than UB. Null when UB saw none. */
  throttledVsUbPct: number | null
  /** (completion − UB) / UB × 100: positive = slower than UB. */
  completionVsUbPct: number
  oracleCompletionMsMean: number
  /** Mean over seeds of completionMs / oracle completionMs (1 = as fast as perfect knowledge). */
  oracleRatio: number
  oracleRatioCi95: number
  meanResponseMsMean: number
  responseP50MsMean: number
  responseP95MsMean: number
  responseP99MsMean: number
  /** Jain's index over clients' mean response times, mean over seeds. */
  fairnessMean: number
  telemetryMessagesMean: number
  /** Runs cut off by the virtual-time limit (their figures count what had completed); any is a miss. */
  incompleteRuns: number
}

export function aggregateRows(spec: GridSpec, tasks: GridTask[], results: TaskResult[]): SimRow[] {
  // Group task results by (scenario, server, client model), seeds in task order.
  const groups = new Map<string, { task: GridTask; results: TaskResult[] }>()
  tasks.forEach((task, i) => {
    const key = `${task.scenario}|${task.scale}|${task.server}|${task.clientModel}`
    let group = groups.get(key)
    if (!group) groups.set(key, (group = { task, results: [] }))
    group.results.push(results[i]!)
  })
  const ub = spec.strategies.indexOf(REFERENCE_STRATEGY)
  const rows: SimRow[] = []
  for (const { task, results: seeds } of groups.values()) {
    const scenario = spec.scenarios[task.scenario]!
    const oracle = seeds.map((r) => r.oracleCompletionMs)
    spec.strategies.forEach((strategy, s) => {
      spec.feedbacks.forEach((feedback, f) => {
        const runs = seeds.map((r) => r.runs[s]![f]!)
        const ubRuns = ub >= 0 ? seeds.map((r) => r.runs[ub]![f]!) : runs
        const pick = (get: (m: RunMetrics) => number) => runs.map(get)
        const throttled = pick((m) => m.throttled)
        const completion = pick((m) => m.completionMs)
        const attempts = pick((m) => m.attempts)
        const ratios = runs.map((m, i) => m.completionMs / oracle[i]!)
        const ubThrottled = mean(ubRuns.map((m) => m.throttled))
        const ubCompletion = mean(ubRuns.map((m) => m.completionMs))
        rows.push({
          scenario: scenario.name,
          family: scenario.family,
          scale: task.scale,
          server: seeds[0]!.serverName,
          clientModel: spec.clientModels[task.clientModel]!,
          clients: scenario.clients,
          requests: scenario.requests,
          strategy,
          feedback,
          seeds: runs.length,
          attempts: round(mean(attempts)),
          attemptsCi95: round(ci95HalfWidth(attempts)),
          throttled: round(mean(throttled)),
          completionMs: round(mean(completion)),
          throttledMean: round(mean(throttled)),
          throttledCi95: round(ci95HalfWidth(throttled)),
          completionMsMean: round(mean(completion)),
          completionMsCi95: round(ci95HalfWidth(completion)),
          ubThrottledMean: round(ubThrottled),
          ubCompletionMsMean: round(ubCompletion),
          throttledVsUbPct: ubThrottled > 0 ? round(((mean(throttled) - ubThrottled) / ubThrottled) * 100) : null,
          completionVsUbPct: round(((mean(completion) - ubCompletion) / ubCompletion) * 100),
          oracleCompletionMsMean: round(mean(oracle)),
          oracleRatio: round(mean(ratios), 4),
          oracleRatioCi95: round(ci95HalfWidth(ratios), 4),
          meanResponseMsMean: round(mean(pick((m) => m.meanResponseMs))),
          responseP50MsMean: round(mean(pick((m) => m.responseP50Ms))),
          responseP95MsMean: round(mean(pick((m) => m.responseP95Ms))),
          responseP99MsMean: round(mean(pick((m) => m.responseP99Ms))),
          fairnessMean: round(mean(pick((m) => m.fairness)), 4),
          telemetryMessagesMean: round(mean(pick((m) => m.telemetryMessages))),
          incompleteRuns: runs.filter((m) => m.incomplete).length,
        })
      })
    })
  }
  return rows
}

/** Fixed decimals keep the JSON readable and byte-stable. */
function round(value: number, decimals = 3): number {
  const factor = 10 ** decimals
  const rounded = Math.round(value * factor) / factor
  return Object.is(rounded, -0) ? 0 : rounded
}
