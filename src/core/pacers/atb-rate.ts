// What the lane has actually been getting through: the times of its recent successes
// (admitted attempts) and failures, in a bounded log. The default ATB bounds its rate by
// this and, during congestion, reads the quota's share available to it from the spacing
// of its own successes — the only evidence a status-only client has.
//
// Storage is one flat array of (time, value) pairs that grows to its bound and then wraps
// around: an idle lane holds a few dozen bytes, not a full log (thousands of idle scopes must
// stay cheap). A plain number array measured smaller than typed arrays at these sizes.

/** A bounded, time-ordered log of (time, value) pairs. */
export class TimeRing {
  /** Interleaved time, value; at most 2 × maxEntries numbers. */
  readonly #data: number[] = []
  /** Pair index of the oldest entry once the ring is full. */
  #start = 0

  readonly #maxEntries: number

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries
  }

  /** Entries held. */
  get length(): number {
    return this.#data.length >> 1
  }

  #slot(i: number): number {
    return ((this.#start + i) % this.#maxEntries) * 2
  }

  /** Time of the i-th entry, oldest first. */
  timeAt(i: number): number {
    return this.#data[this.#slot(i)] as number
  }

  valueAt(i: number): number {
    return this.#data[this.#slot(i) + 1] as number
  }

  /** Append; a time before the newest is recorded as the newest (order survives a clock stepping back). */
  push(time: number, value: number): void {
    const length = this.length
    const at = length > 0 ? Math.max(time, this.timeAt(length - 1)) : time
    if (length < this.#maxEntries) {
      this.#data.push(at, value)
      return
    }
    const slot = this.#start * 2
    this.#data[slot] = at
    this.#data[slot + 1] = value
    this.#start = (this.#start + 1) % this.#maxEntries
  }

  /** Index of the first entry later than `cutoff` (entries are in time order). */
  firstIndexAfter(cutoff: number): number {
    let low = 0
    let high = this.length
    while (low < high) {
      const mid = (low + high) >> 1
      if (this.timeAt(mid) > cutoff) high = mid
      else low = mid + 1
    }
    return low
  }
}

/** Admitted (value 1) and rejected (value 0) attempts over time. */
export class OutcomeLog {
  readonly #ring: TimeRing

  constructor(maxEntries: number, entries: Array<[number, number]> = []) {
    this.#ring = new TimeRing(maxEntries)
    for (const [time, ok] of entries.slice(-maxEntries)) this.#ring.push(time, ok === 1 ? 1 : 0)
  }

  /** Record an admitted (ok = true) or rejected attempt at `now`. */
  add(now: number, ok: boolean): void {
    this.#ring.push(now, ok ? 1 : 0)
  }

  /** Admitted and rejected counts in (now − windowMs, now]. */
  counts(now: number, windowMs: number): { admitted: number; rejected: number } {
    let admitted = 0
    let rejected = 0
    const ring = this.#ring
    for (let i = ring.firstIndexAfter(now - windowMs); i < ring.length; i++) {
      if (ring.timeAt(i) > now) break
      if (ring.valueAt(i) === 1) admitted++
      else rejected++
    }
    return { admitted, rejected }
  }

  /**
   * Admitted attempts per second over the last `windowMs`, or over the last `minCount`
   * admissions when those stretch further back (a slow lane sees one success a minute: a
   * fixed window would read 0 or 1 of them). The span never starts before `since`. It is never
   * shorter than `minSpanMs` unless it holds `minCount` admissions: the floor keeps one early
   * success from reading as a high rate, and with `minCount` of them the span they took is
   * measured, not assumed (a lone script on a 10/s quota was admitted 29 times in 6 s, read as
   * 2.9/s over the 10 s floor, and paced a third of its quota). A widened span starts `tickMs`
   * before that admission, so that it counts: one clock tick on the caller's time scale (an
   * absolute millisecond is a larger share of a faster quota's span, and the same admissions read
   * as a different rate at another scale).
   */
  admittedPerSecond(now: number, windowMs: number, since: number, minSpanMs: number, minCount = 0, tickMs = 1): number {
    let start = now - windowMs
    let minCountAt = -Infinity
    if (minCount > 0) {
      // Walk back to the minCount-th newest admission; if it is older than the window, widen.
      let seen = 0
      for (let i = this.#ring.length - 1; i >= 0; i--) {
        const at = this.#ring.timeAt(i)
        if (at > now || this.#ring.valueAt(i) !== 1) continue
        if (++seen === minCount) {
          minCountAt = at
          if (at <= start) start = at - tickMs
          break
        }
      }
    }
    const measuredMs = now - Math.max(start, since)
    // minCount admissions inside the span: it is measured, not floored.
    const span = minCountAt > now - measuredMs ? measuredMs : Math.max(minSpanMs, measuredMs)
    if (!(span > 0)) return 0
    return this.counts(now, span).admitted / (span / 1000)
  }

  /** Time of the latest admitted attempt, or undefined. */
  lastAdmittedAt(): number | undefined {
    for (let i = this.#ring.length - 1; i >= 0; i--) if (this.#ring.valueAt(i) === 1) return this.#ring.timeAt(i)
    return undefined
  }

  /** Plain data for persistence: [time, 1 | 0] pairs, oldest first. */
  toJSON(): Array<[number, number]> {
    const out: Array<[number, number]> = []
    for (let i = 0; i < this.#ring.length; i++) out.push([this.#ring.timeAt(i), this.#ring.valueAt(i)])
    return out
  }
}

export function createOutcomeLog(maxEntries: number, entries: Array<[number, number]> = []): OutcomeLog {
  return new OutcomeLog(maxEntries, entries)
}
