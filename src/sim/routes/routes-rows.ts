// The routes runs over seeds → one row per (strategy, feedback, scale, splitting), and
// the acceptance line of issue 15 for the default: overall 429s ≤ max(10% of UB's at
// k = 1, clients) and each route's completion ≤ 1.15 × its oracle, every run complete.
import { REFERENCE_STRATEGY } from '../grid-spec.js'
import { ci95HalfWidth, mean } from '../statistics.js'
import type { Feedback } from '../types.js'
import type { RoutesRun, ThrottledBySource } from './run-routes.js'

export interface RoutesRow {
  strategy: string
  feedback: Feedback
  scale: number
  learnRouteSplits: boolean
  seeds: number
  clients: number
  requests: number
  attempts: number
  throttledMean: number
  throttledCi95: number
  oracleRatio: number
  /** Per route: mean 429s and mean over seeds of completion ÷ the route's oracle. */
  routes: Record<string, { requests: number; throttledMean: number; oracleRatio: number; oracleRatioCi95: number; throttledBySourceMean: ThrottledBySource }>
  splitsMean: number
  incompleteRuns: number
}

export const ROUTES_SHARE_OF_UB = 0.1
export const ROUTES_ORACLE_LIMIT = 1.15

const round = (v: number, digits = 3) => {
  const f = 10 ** digits
  const r = Math.round(v * f) / f
  return Object.is(r, -0) ? 0 : r
}

export function aggregateRoutes(runs: readonly RoutesRun[], clients: number, learnRouteSplits: (run: RoutesRun) => boolean): RoutesRow[] {
  const groups = new Map<string, RoutesRun[]>()
  for (const run of runs) {
    const key = `${run.strategy}|${run.feedback}|${run.scale}|${learnRouteSplits(run)}`
    let group = groups.get(key)
    if (!group) groups.set(key, (group = []))
    group.push(run)
  }
  return [...groups.values()].map((group) => {
    const first = group[0]!
    const routes: RoutesRow['routes'] = {}
    for (const name of Object.keys(first.routes)) {
      const ratios = group.map((r) => r.routes[name]!.completionMs / r.routes[name]!.oracleCompletionMs)
      routes[name] = {
        requests: round(mean(group.map((r) => r.routes[name]!.requests))),
        throttledMean: round(mean(group.map((r) => r.routes[name]!.throttled))),
        oracleRatio: round(mean(ratios), 4),
        oracleRatioCi95: round(ci95HalfWidth(ratios), 4),
        throttledBySourceMean: {
          originBeforeSplit: round(mean(group.map((r) => r.routes[name]!.throttledBySource.originBeforeSplit))),
          splitLane: round(mean(group.map((r) => r.routes[name]!.throttledBySource.splitLane))),
          originAfterSplit: round(mean(group.map((r) => r.routes[name]!.throttledBySource.originAfterSplit))),
        },
      }
    }
    const throttled = group.map((r) => r.throttled)
    return {
      strategy: first.strategy,
      feedback: first.feedback,
      scale: first.scale,
      learnRouteSplits: learnRouteSplits(first),
      seeds: group.length,
      clients,
      requests: round(mean(group.map((r) => Object.values(r.routes).reduce((a, f) => a + f.requests, 0)))),
      attempts: round(mean(group.map((r) => r.attempts))),
      throttledMean: round(mean(throttled)),
      throttledCi95: round(ci95HalfWidth(throttled)),
      oracleRatio: round(mean(group.map((r) => r.completionMs / r.oracleCompletionMs)), 4),
      routes,
      splitsMean: round(mean(group.map((r) => r.splits))),
      incompleteRuns: group.filter((r) => r.incomplete).length,
    }
  })
}

export interface RoutesVerdict {
  row: RoutesRow
  allowedThrottled: number | undefined
  misses: string[]
  pass: boolean | undefined
}

/** The line for every non-reference row with learnRouteSplits on; UB's 429s are taken at k = 1. */
export function judgeRoutes(rows: readonly RoutesRow[]): RoutesVerdict[] {
  return rows.map((row) => {
    if (row.strategy === REFERENCE_STRATEGY || !row.learnRouteSplits) return { row, allowedThrottled: undefined, misses: [], pass: undefined }
    const ub = rows.find((r) => r.strategy === REFERENCE_STRATEGY && r.feedback === row.feedback && r.scale === 1)
    const misses: string[] = []
    const allowed = ub ? Math.max(ROUTES_SHARE_OF_UB * ub.throttledMean, row.clients) : undefined
    if (allowed === undefined) misses.push('no UB row at k = 1')
    else if (row.throttledMean > allowed) misses.push('429s')
    for (const [name, route] of Object.entries(row.routes)) if (route.oracleRatio > ROUTES_ORACLE_LIMIT) misses.push(`${name} time`)
    if (row.incompleteRuns > 0) misses.push('incomplete')
    return { row, allowedThrottled: allowed, misses, pass: misses.length === 0 }
  })
}
