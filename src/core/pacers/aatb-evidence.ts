// The lane's own evidence, against which AATB bounds what an aggregate may do to it: when the
// API admitted the lane (its last few admissions), when it sent, and how many sends since its
// last 429. Counts, not durations: every time it reports is one the lane measured.

/** How many of the lane's latest admissions (and sends) make its evidence. */
export const EVIDENCE_COUNT = 4
/**
 * Admissions behind the lane's admitted rate (which bounds the fleet's hurry). Four forgot a fast
 * lane's rate over one dry spell of a stepped quota (5-client runs 1.10 → 1.13–1.14 × the oracle on a
 * sliding window); eight keep what the earlier 60 s time constant kept (no headline row moved there).
 */
const RATE_ADMISSIONS = 8

export interface LaneEvidence {
  onSend(now: number): void
  onAdmitted(now: number): void
  onThrottled(): void
  /**
   * The lane's admission spacing: the mean interval between its last EVIDENCE_COUNT + 1
   * admissions; while it has fewer than two, the mean interval between its sends; undefined
   * before its second send. The spacing at which the API actually lets this lane through.
   */
  spacingMs(): number | undefined
  /** Admission intervals per second over its last RATE_ADMISSIONS admissions, up to now (0 before its second). */
  admittedPerSecond(now: number): number
  /** Sends since the lane's last 429 (Infinity before its first). */
  readonly sendsSinceThrottle: number
}

/** Keeps at most `size` latest times. */
function recentTimes(size: number) {
  const times: number[] = []
  return {
    times,
    push(at: number) {
      times.push(at)
      if (times.length > size) times.shift()
    },
    meanIntervalMs(): number | undefined {
      return times.length < 2 ? undefined : (times[times.length - 1]! - times[0]!) / (times.length - 1)
    },
  }
}

export function createLaneEvidence(): LaneEvidence {
  const admissions = recentTimes(EVIDENCE_COUNT + 1)
  const rateAdmissions = recentTimes(RATE_ADMISSIONS + 1)
  const sends = recentTimes(EVIDENCE_COUNT + 1)
  let sendsSinceThrottle = Infinity
  return {
    onSend(now) {
      sends.push(now)
      sendsSinceThrottle++
    },
    onAdmitted(now) {
      admissions.push(now)
      rateAdmissions.push(now)
    },
    onThrottled() {
      sendsSinceThrottle = 0
    },
    spacingMs() {
      return admissions.meanIntervalMs() ?? sends.meanIntervalMs()
    },
    admittedPerSecond(now) {
      const first = rateAdmissions.times[0]
      const intervals = rateAdmissions.times.length - 1
      if (first === undefined || intervals < 1) return 0
      const spanMs = now - first
      return spanMs > 0 ? intervals / (spanMs / 1000) : Infinity
    },
    get sendsSinceThrottle() { return sendsSinceThrottle },
  }
}
