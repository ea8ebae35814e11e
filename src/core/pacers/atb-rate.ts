// What the lane has actually been getting through: the times of its recent successes
// (admitted attempts) and failures, in a bounded log. The default ATB bounds its rate by
// this and, during congestion, reads the quota's share available to it from the spacing
// of its own successes — the only evidence a status-only client has.

export interface OutcomeLog {
  /** Record an admitted (ok = true) or rejected attempt at `now`. */
  add(now: number, ok: boolean): void
  /**
   * Admitted attempts per second over the last `windowMs`, or over the last `minCount`
   * admissions when those stretch further back (a slow lane sees one success a minute: a
   * fixed window would read 0 or 1 of them). The span never starts before `since` and is
   * never shorter than `minSpanMs`.
   */
  admittedPerSecond(now: number, windowMs: number, since: number, minSpanMs: number, minCount?: number): number
  /** Admitted and rejected counts in (now − windowMs, now]. */
  counts(now: number, windowMs: number): { admitted: number; rejected: number }
  /** Time of the latest admitted attempt, or undefined. */
  lastAdmittedAt(): number | undefined
  /** Plain data for persistence: [time, 1 | 0] pairs, oldest first. */
  toJSON(): Array<[number, number]>
}

export function createOutcomeLog(maxEntries: number, entries: Array<[number, number]> = []): OutcomeLog {
  const times: number[] = []
  const oks: boolean[] = []
  for (const [time, ok] of entries.slice(-maxEntries)) {
    times.push(time)
    oks.push(ok === 1)
  }
  const firstIndexAfter = (cutoff: number): number => {
    // Entries are appended in time order (ties allowed), so a binary search finds the window start.
    let low = 0
    let high = times.length
    while (low < high) {
      const mid = (low + high) >> 1
      if ((times[mid] as number) > cutoff) high = mid
      else low = mid + 1
    }
    return low
  }
  return {
    add(now, ok) {
      const last = times[times.length - 1]
      times.push(last !== undefined && now < last ? last : now)
      oks.push(ok)
      if (times.length > maxEntries) {
        times.shift()
        oks.shift()
      }
    },
    counts(now, windowMs) {
      let admitted = 0
      let rejected = 0
      for (let i = firstIndexAfter(now - windowMs); i < times.length; i++) {
        if ((times[i] as number) > now) break
        if (oks[i]) admitted++
        else rejected++
      }
      return { admitted, rejected }
    },
    admittedPerSecond(now, windowMs, since, minSpanMs, minCount = 0) {
      let start = now - windowMs
      if (minCount > 0) {
        // Walk back to the minCount-th newest admission; if it is older than the window, widen.
        let seen = 0
        for (let i = times.length - 1; i >= 0; i--) {
          const at = times[i] as number
          if (at > now || !oks[i]) continue
          if (++seen === minCount) {
            if (at <= start) start = at - 1
            break
          }
        }
      }
      const span = Math.max(minSpanMs, now - Math.max(start, since))
      if (!(span > 0)) return 0
      return this.counts(now, span).admitted / (span / 1000)
    },
    lastAdmittedAt() {
      for (let i = times.length - 1; i >= 0; i--) if (oks[i]) return times[i]
      return undefined
    },
    toJSON() {
      return times.map((time, i) => [time, oks[i] ? 1 : 0] as [number, number])
    },
  }
}
