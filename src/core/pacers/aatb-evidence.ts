// The lane's own evidence, against which AATB bounds what an aggregate may do to it: when the
// API admitted the lane (its last few admissions), when it sent, and how many sends since its
// last 429. Counts, not durations: every time it reports is one the lane measured.

/** How many of the lane's latest admissions (and sends) make its evidence. */
export const EVIDENCE_COUNT = 4

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
  /** Admission intervals per second over its recent admissions, up to now (0 before its second). */
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
  const sends = recentTimes(EVIDENCE_COUNT + 1)
  let sendsSinceThrottle = Infinity
  return {
    onSend(now) {
      sends.push(now)
      sendsSinceThrottle++
    },
    onAdmitted(now) {
      admissions.push(now)
    },
    onThrottled() {
      sendsSinceThrottle = 0
    },
    spacingMs() {
      return admissions.meanIntervalMs() ?? sends.meanIntervalMs()
    },
    admittedPerSecond(now) {
      const first = admissions.times[0]
      const intervals = admissions.times.length - 1
      if (first === undefined || intervals < 1) return 0
      const spanMs = now - first
      return spanMs > 0 ? intervals / (spanMs / 1000) : Infinity
    },
    get sendsSinceThrottle() { return sendsSinceThrottle },
  }
}
