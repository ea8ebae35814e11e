// The aggregator's windows sized for the quota a fleet shares. The aggregator sums a fleet's
// attempts and 429s over its report window and counts a client active over twice that; a window
// measured in seconds is right for one quota only. The paper's 30 s holds 40 units of its
// 80-per-minute refill: a fleet running at its quota puts about 40 admissions in a window, which
// reads the fleet's rate within about 1/√40 ≈ 16 %. The same count on any quota is the same
// window in refill units: 3 s at 800 per minute, 30 min at 80 per hour (docs/telemetry.md).
import { DEFAULT_AGGREGATOR_OPTIONS as D, type AggregatorOptions } from './aggregator.js'

/** Units of the quota's refill a report window holds (the paper's: 30 s of 80 per minute). */
export const REFILL_UNITS_PER_WINDOW = 40
// The defaults' proportions: buckets per report window (30 s in 2 s), the active window's length in
// report windows (60 s: 2) and its buckets (10 s: 6).
const REPORT_BUCKETS = D.reportWindowMs / D.reportBucketMs
const ACTIVE_WINDOWS = D.activeWindowMs / D.reportWindowMs
const ACTIVE_BUCKETS = D.activeWindowMs / D.activeBucketMs

/** The report window that holds REFILL_UNITS_PER_WINDOW units of a quota refilling `perSecond`. */
export function windowForQuota(perSecond: number): number {
  if (!(perSecond > 0) || !Number.isFinite(perSecond)) throw new RangeError(`a quota rate must be a positive number per second, got ${perSecond}`)
  return (REFILL_UNITS_PER_WINDOW / perSecond) * 1000
}

/**
 * The four window options for a report window of about `reportWindowMs`, in the defaults'
 * proportions (15 buckets; the active window twice as long, in 6 buckets), rounded to whole
 * milliseconds that divide evenly. 30 000 gives the defaults exactly.
 */
export function aggregatorWindows(reportWindowMs: number): Required<Pick<AggregatorOptions, 'reportWindowMs' | 'reportBucketMs' | 'activeWindowMs' | 'activeBucketMs'>> {
  if (!(reportWindowMs > 0) || !Number.isFinite(reportWindowMs)) throw new RangeError(`reportWindowMs must be a positive number, got ${reportWindowMs}`)
  const bucketMs = Math.max(1, Math.round(reportWindowMs / REPORT_BUCKETS))
  const activeBucketMs = (ACTIVE_WINDOWS * REPORT_BUCKETS * bucketMs) / ACTIVE_BUCKETS
  return { reportWindowMs: REPORT_BUCKETS * bucketMs, reportBucketMs: bucketMs, activeWindowMs: ACTIVE_BUCKETS * activeBucketMs, activeBucketMs }
}
