// Report bookkeeping of the default AATB pacer: counts since the previous report, the
// quota hint last seen, and when the next report is due (every report window while
// the lane is active; early after a 429, at most once per throttle-report interval).
import type { PacerReport, Signal } from '../types.js'
import { quotaHintOf } from './atb-quota.js'

const MAX_COUNT = 1_000_000

export interface ReportSchedule {
  reportWindowMs: number
  throttleReportIntervalMs: number
  /** A lane with no attempt (and no backlog) for this long stops reporting. */
  idleAfterMs: number
}

export interface ReportCounter {
  onSend(now: number, cost: number): void
  onResult(now: number, signal: Signal): void
  dueAt(now: number, backlog?: number): number
  take(now: number): PacerReport | undefined
  readonly lastReportAt: number
}

export { quotaHintOf }

export function createReportCounter(schedule: ReportSchedule): ReportCounter {
  let attempts = 0
  let throttled = 0
  let quota: PacerReport['quota']
  let lastReportAt = -Infinity
  let lastThrottleReportAt = -Infinity
  let lastActivityAt = -Infinity
  return {
    onSend(now, cost) {
      attempts += Math.max(0, cost)
      lastActivityAt = now
    },
    onResult(now, signal) {
      if (signal.kind === 'throttled') throttled++
      const hint = quotaHintOf(signal)
      if (hint) quota = hint
      lastActivityAt = now
    },
    dueAt(now, backlog = 0) {
      if (throttled > 0) return Math.max(now, lastThrottleReportAt + schedule.throttleReportIntervalMs)
      const active = backlog > 0 || now - lastActivityAt < schedule.idleAfterMs
      if (!active) return Infinity
      // After a quiet spell this is in the past: report at once so the fleet learns of us.
      return Math.max(now, lastReportAt + schedule.reportWindowMs)
    },
    take(now) {
      // A 429 is always an attempt; resumed state could disagree, so never report fewer attempts than 429s.
      // Capped at the protocol's per-report maximum (MAX_REPORT_COUNT), which core cannot import.
      const counted = Math.min(MAX_COUNT, Math.max(Math.round(attempts), throttled))
      const report: PacerReport = { attempts: counted, throttled: Math.min(throttled, counted) }
      if (quota) report.quota = quota
      if (throttled > 0) lastThrottleReportAt = now
      lastReportAt = now
      attempts = 0
      throttled = 0
      return report
    },
    get lastReportAt() { return lastReportAt },
  }
}
