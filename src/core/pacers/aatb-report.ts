// Report bookkeeping of the default AATB pacer: counts since the previous report, the
// quota hint last seen, and when the next report is due: every report period (the
// aggregator's window) while the lane is active, and at once after a 429. No duration of
// its own: "active" is a backlog or any attempt or answer since the previous report (so an
// idle lane sends one last report with its final counts, then stops), and early reports
// are bounded by the 429s themselves (each is reported once; the driver keeps one report
// in flight per lane, so 429s arriving meanwhile share the next one).
import type { PacerReport, Signal } from '../types.js'
import { quotaHintOf } from './atb-quota.js'

const MAX_COUNT = 1_000_000

export interface ReportSchedule {
  /** The routine report period now (the aggregator's window, once an aggregate has told it). */
  periodMs(): number
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
      if (throttled > 0) return now
      const active = backlog > 0 || now - lastActivityAt < 2 * schedule.periodMs()
      if (!active) return Infinity
      // After a quiet spell this is in the past: report at once so the fleet learns of us.
      return Math.max(now, lastReportAt + schedule.periodMs())
    },
    take(now) {
      // A 429 is always an attempt; resumed state could disagree, so never report fewer attempts than 429s.
      // Capped at the protocol's per-report maximum (MAX_REPORT_COUNT), which core cannot import.
      const counted = Math.min(MAX_COUNT, Math.max(Math.round(attempts), throttled))
      const report: PacerReport = { attempts: counted, throttled: Math.min(throttled, counted) }
      if (quota) report.quota = quota
      lastReportAt = now
      attempts = 0
      throttled = 0
      return report
    },
    get lastReportAt() { return lastReportAt },
  }
}
