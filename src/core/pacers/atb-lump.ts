// Spending a lump the server named. A 429 whose Retry-After is long on the lane's scale (a
// stepped bucket's time to its next step) says the quota comes back in a lump at that time.
// Exponential backoff that honours the Retry-After spends each lump as it lands and finishes with
// the oracle there; a lane that paces its share of the lump through its token bucket leaves part
// of the lump unspent until the step after (1.13–1.38 × the oracle at k = 1 with its 429s spread
// out, docs/algorithms.md "Spending a named lump"). So once the named time has passed, the lane
// sends as fast as its answers come (no bucket spacing, no token debt, no per-request back-off)
// until a 429 ends the lump; that 429 is the lump running out, not congestion.
//
// Not every long Retry-After names a lump: a sliding window counter names the time one unit
// fades back in, and most attempts sent there are refused (72 of 78 in the simulator, against
// 201 of 509 on a stepped bucket). The lane judges by its own attempt at each named time, in
// counts only: two such attempts in a row refused, or a lump's spending ended by a short
// Retry-After (units coming back one by one), and the lane paces again until an attempt at a
// named time is admitted.

/** Consecutive refused attempts at named times after which the lane stops trusting them as lumps. */
const REFUSALS_TO_DISTRUST = 2

export class LumpSpending {
  /** The named time whose first attempt is awaited ('armed'), in flight ('sent'), or none. */
  #probe: 'none' | 'armed' | 'sent' = 'none'
  #namedAt = 0
  /** Attempts at named times refused in a row. */
  #refusals = 0
  /** A lump's spending ended with a short Retry-After: the quota trickles back. */
  #trickles = false

  /** Whether named times have been lumps so far (a lane starts by trusting the server's word). */
  trusted(): boolean {
    return this.#refusals < REFUSALS_TO_DISTRUST && !this.#trickles
  }

  /** A 429 named a lump at `retryAt`: the lane's first attempt from then on tells whether it was one. */
  named(retryAt: number): void {
    this.#probe = 'armed'
    this.#namedAt = retryAt
  }

  /** An attempt went at `now`. */
  sent(now: number): void {
    if (this.#probe === 'armed' && now >= this.#namedAt) this.#probe = 'sent'
  }

  /** The answer to an attempt (a transport failure says nothing). */
  answered(admitted: boolean): void {
    if (this.#probe !== 'sent') return
    this.#probe = 'none'
    if (admitted) {
      this.#refusals = 0
      this.#trickles = false
    } else {
      this.#refusals++
    }
  }

  /** A lump's spending ended with a short Retry-After: units come back one by one there. */
  trickled(): void {
    this.#trickles = true
  }
}
