// Every (strategy, feedback, scale, seed) of the routes scenario, plus the default with
// route splitting off as the control that shows what splitting changes. In-process and
// sequential: each run is a few hundred ms of the real client in virtual time.
import { REFERENCE_STRATEGY } from '../grid-spec.js'
import { scaleQuota } from '../scale-run.js'
import { lookupStrategy } from '../strategies.js'
import type { Feedback } from '../types.js'
import { aggregateRoutes, type RoutesRow } from './routes-rows.js'
import { ROUTES_SCENARIO, type RoutesScenario } from './routes-scenario.js'
import { runRoutes, type RoutesRun } from './run-routes.js'

export interface RoutesGridSpec {
  scenario?: RoutesScenario
  scales: readonly number[]
  seeds: number
  firstSeed?: number
  feedbacks: readonly Feedback[]
  /** Registry names; `exponential` (UB) always runs. `atb` is the client's default strategy, unset. */
  strategies: readonly string[]
  /** Also run the default with `learnRouteSplits: false`. Default true. */
  control?: boolean
}

/** The client's own default: `atb` runs with no `strategy` option at all. */
export const DEFAULT_STRATEGY = 'atb'

export async function runRoutesGrid(spec: RoutesGridSpec, onProgress?: (done: number, total: number) => void): Promise<{ rows: RoutesRow[]; runs: RoutesRun[] }> {
  const scenario = spec.scenario ?? ROUTES_SCENARIO
  const strategies = [...new Set([REFERENCE_STRATEGY, ...spec.strategies])]
  for (const name of strategies) {
    const entry = lookupStrategy(name)
    if (!entry) throw new Error(`unknown strategy '${name}'`)
    if (entry.setup({ clients: 1, quota: scenario.global, seed: 1 }).telemetry) throw new Error(`strategy '${name}' needs a telemetry endpoint; the routes runs have none`)
  }
  const variants: Array<{ strategy: string; learnRouteSplits: boolean }> = strategies.map((strategy) => ({ strategy, learnRouteSplits: true }))
  if ((spec.control ?? true) && strategies.includes(DEFAULT_STRATEGY)) variants.push({ strategy: DEFAULT_STRATEGY, learnRouteSplits: false })
  const total = variants.length * spec.feedbacks.length * spec.scales.length * spec.seeds
  const runs: RoutesRun[] = []
  const splitting = new WeakMap<RoutesRun, boolean>()
  for (const variant of variants) {
    for (const feedback of spec.feedbacks) {
      for (const scale of spec.scales) {
        for (let s = 0; s < spec.seeds; s++) {
          const seed = (spec.firstSeed ?? 1) + s
          const entry = lookupStrategy(variant.strategy)!
          const run = await runRoutes({
            scenario,
            seed,
            scale,
            feedback,
            strategyName: variant.strategy,
            // The global limit as it runs at this scale (k times slower): what a strategy told the quota is told.
            ...(variant.strategy === DEFAULT_STRATEGY ? {} : { strategy: () => entry.setup({ clients: scenario.clients, quota: scaleQuota(scenario.global, scale), seed }).strategy }),
            ...(variant.learnRouteSplits ? {} : { learnRouteSplits: false }),
          })
          splitting.set(run, variant.learnRouteSplits)
          runs.push(run)
          onProgress?.(runs.length, total)
        }
      }
    }
  }
  return { rows: aggregateRoutes(runs, scenario.clients, (run) => splitting.get(run) ?? true), runs }
}
