// The headline check: polite-fetch's default strategy against the targets the project
// set itself, per scenario. "Allowed" is the most 429s that meets the target; every
// figure is a mean over the same seeds as UB's.
import type { SimRow } from '../sim-row.js'
import { judgedFeedback, type Feedback } from '../types.js'

export interface HeadlineTarget {
  /** Allowed 429s = min(UB, max(shareOfUb × UB, clients × perClient)). */
  shareOfUb: number
  perClient: number
  /** Completion limit as a multiple of UB's completion, or of the oracle's. */
  completionLimit: number
  completionBase: 'ub' | 'oracle'
}

const CONTINUOUS_SERVERS = new Set(['token-bucket-continuous', 'leaky-bucket', 'sliding-window-counter'])

/**
 * The target for a server and feedback mode, or undefined where none is set. Leaky
 * bucket and sliding-window counter refill continuously and take the continuous targets.
 */
export function headlineTarget(server: string, given: Feedback): HeadlineTarget | undefined {
  const feedback = judgedFeedback(given)
  const continuous = CONTINUOUS_SERVERS.has(server)
  if (feedback === 'status-only') {
    if (continuous) return { shareOfUb: 0.1, perClient: 1, completionLimit: 1.15, completionBase: 'ub' }
    if (server === 'token-bucket-stepped') return { shareOfUb: 0.25, perClient: 1, completionLimit: 1.25, completionBase: 'ub' }
  }
  if (feedback === 'retry-after' && continuous) return { shareOfUb: 0.03, perClient: 1, completionLimit: 1.15, completionBase: 'ub' }
  if (feedback === 'ratelimit' && continuous) return { shareOfUb: 0.01, perClient: 0.1, completionLimit: 1.1, completionBase: 'oracle' }
  return undefined
}

/**
 * AATB's targets (status-only only: telemetry is the lever when the server says nothing).
 * Tighter than ATB's on 429s, since the fleet's view removes most probing.
 */
export function aatbTarget(server: string, feedback: Feedback): HeadlineTarget | undefined {
  if (feedback !== 'status-only') return undefined
  if (server === 'token-bucket-continuous') return { shareOfUb: 0.03, perClient: 1, completionLimit: 1.15, completionBase: 'ub' }
  if (server === 'token-bucket-stepped') return { shareOfUb: 0.1, perClient: 1, completionLimit: 1.25, completionBase: 'ub' }
  return undefined
}

export interface HeadlineRow {
  scenario: string
  server: string
  feedback: Feedback
  clientModel: string
  clients: number
  ubThrottled: number
  throttled: number
  awsThrottled: number | undefined
  allowedThrottled: number | undefined
  completionVsUbPct: number
  oracleRatio: number
  /** The completion limit as "≤ 1.15× UB" / "≤ 1.10× oracle". */
  completionLimit: string | undefined
  throttledOk: boolean | undefined
  completionOk: boolean | undefined
  fewerThanAws: boolean | undefined
  /** Telemetry messages per request (AATB). */
  messagesPerRequest: number
  /** Runs cut off by the virtual-time limit; any of them makes the row a miss. */
  incompleteRuns: number
  /** All three checks hold and every run completed; undefined where no target is set. */
  pass: boolean | undefined
}

export function evaluateHeadline(
  rows: readonly SimRow[],
  strategy = 'atb',
  peer: string | undefined = 'aws-adaptive',
  targetOf: (server: string, feedback: Feedback) => HeadlineTarget | undefined = headlineTarget,
): HeadlineRow[] {
  const key = (r: SimRow) => `${r.scenario}|${r.scale ?? 1}|${r.server}|${r.feedback}|${r.clientModel}`
  const peers = new Map(peer === undefined ? [] : rows.filter((r) => r.strategy === peer).map((r) => [key(r), r]))
  return rows
    .filter((r) => r.strategy === strategy)
    .map((r) => {
      const target = targetOf(r.server, r.feedback)
      const aws = peers.get(key(r))
      const ub = r.ubThrottledMean
      const allowed = target ? Math.min(ub, Math.max(target.shareOfUb * ub, r.clients * target.perClient)) : undefined
      const throttledOk = allowed === undefined ? undefined : r.throttledMean <= allowed
      const completionOk = !target
        ? undefined
        : target.completionBase === 'ub'
          ? r.completionMsMean <= target.completionLimit * r.ubCompletionMsMean
          : r.oracleRatio <= target.completionLimit
      const fewerThanAws = aws === undefined ? undefined : r.throttledMean < aws.throttledMean || (r.throttledMean === 0 && aws.throttledMean === 0)
      const pass = target ? Boolean(throttledOk && completionOk && fewerThanAws !== false && r.incompleteRuns === 0) : undefined
      return {
        scenario: r.scenario,
        server: r.server,
        feedback: r.feedback,
        clientModel: r.clientModel,
        clients: r.clients,
        ubThrottled: ub,
        throttled: r.throttledMean,
        awsThrottled: aws?.throttledMean,
        allowedThrottled: allowed,
        completionVsUbPct: r.completionVsUbPct,
        oracleRatio: r.oracleRatio,
        completionLimit: target ? `≤ ${target.completionLimit.toFixed(2)}× ${target.completionBase === 'ub' ? 'UB' : 'oracle'}` : undefined,
        throttledOk,
        completionOk,
        fewerThanAws,
        messagesPerRequest: r.requests > 0 ? r.telemetryMessagesMean / r.requests : 0,
        incompleteRuns: r.incompleteRuns,
        pass,
      }
    })
}
