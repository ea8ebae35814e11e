// The time scale of a lane whose quota announces no window (status-only and Retry-After lanes):
// how much slower (> 1) or faster (< 1) its quota runs than the paper's (100 per 75 s), on which
// every duration and rate of the options was measured. A lane reading a RateLimit-Policy runs on
// the announced window instead (atb-adaptive.ts `scale`).
//
// The measurement is how long the quota lasted: the time from the lane's first admission to its
// first 429. A bucket of B units drained at D − Q lasts B / (D − Q), k times longer when quota and
// arrivals are k times slower (and k times shorter when they are k times faster). It also depends
// on the load and on when the lane came: across the paper's scenarios at k = 1 it lasts 38–250 s
// (5th–95th percentile). Within that band, widened to a decade (drainBandLowMs–drainBandHighMs),
// the lane keeps the durations as measured (scale 1: the k = 1 pacer, unchanged); a quota that
// lasted longer runs slower than the paper's, and the lane's scale is the drain over the k = 1
// median; one that lasted shorter runs faster, its scale the drain over 60 s
// (shortDrainReferenceMs). A short drain counts only from a lane that sent one attempt at a time
// (a burst of concurrent callers meets its first 429 a round trip after its first admission, which
// measures the round trip, not the quota) and got at least drainShortMinAdmissions through (a lane
// that came late to a quota others had nearly drained reads it short, never long), and only from a
// lane that was not saturated: one that sent as fast as its answers came for most of its drain (a
// script looping over items) drains any quota in seconds, so its drain measures its own speed
// (docs/algorithms.md, "A faster quota"). A long drain counts from one admission (coming late
// only shortens a drain); a lane never admitted measured nothing and stays at 1 (the
// never-admitted lane's doubling finds any scale in log2(k) tries).
import type { AtbConstants } from './atb-constants.js'

/** What a lane has measured of its time scale; a plain record so that it can be saved. */
export interface TimeScaleState {
  /** From how long the quota lasted (1 until measured, or within the k = 1 band). */
  drain: number
  /** Whether the lane has taken its one measurement. */
  measured: boolean
}

/** Relative float noise of an epoch time (about 450 ulps; 0.17 ms at today's epoch, under the clock's 1 ms tick). */
const EPOCH_TIE_RATIO = 1e-13

type ScaleConstants = Pick<AtbConstants, 'drainBandLowMs' | 'drainBandHighMs' | 'drainReferenceMs' | 'drainShortMinAdmissions' | 'minSamples'>

export class LaneTimeScale {
  // Until the measurement: the lane's sends since its first admission, and how many of them were
  // eager (another attempt still out, or sent within one answer time of the previous answer).
  #sends = 0
  #eagerSends = 0
  #answeredAt = -Infinity
  #answerMs = 0
  /**
   * Whether the lane drained the quota itself: saturated (see below) until it first reached the
   * quota, with at least minSamples admissions (a script's loop, a batch's burst). Its later 429s then say first
   * that the quota is dry (a window or a step not back yet), not that other lanes took its share.
   * Not saved: a restored lane does without.
   */
  drainedItself = false
  #drainJudged = false

  constructor(
    private readonly o: ScaleConstants,
    readonly state: TimeScaleState = { drain: 1, measured: false },
  ) {}

  /** A send at `now` with `inFlight` other attempts of the lane out, `admitted`: the lane has been admitted before. */
  noteSend(now: number, inFlight: number, admitted: boolean): void {
    if (this.state.measured || !admitted) return
    this.#sends++
    // Within an epoch time's float noise of the answer time is on it: a send at its answer's
    // instant reads a gap of 0 at one time scale and of one ulp at another.
    if (inFlight > 0 || now - this.#answeredAt <= this.#answerMs + Math.abs(now) * EPOCH_TIE_RATIO) this.#eagerSends++
  }

  /** An answer at `now` to the lane's only attempt out, sent at `sentAt`: the lane's answer time. */
  noteAnswer(now: number, sentAt: number | undefined, alone: boolean): void {
    if (this.state.measured) return
    this.#answeredAt = now
    if (alone && sentAt !== undefined) this.#answerMs = now - sentAt
  }

  /**
   * The lane reached the quota for the first time (its first 429 or 503, the quota's or
   * congestion's alike, or an announced quota's pacing first holding it back), with `admissions`
   * admitted before: whether the lane drained the quota itself. Judged once.
   */
  noteQuotaReached(admissions: number): void {
    if (this.#drainJudged) return
    this.#drainJudged = true
    this.drainedItself = this.#saturated() && admissions >= this.o.minSamples
  }

  /** Whether the lane has reached the quota (see noteQuotaReached). */
  get judged(): boolean {
    return this.#drainJudged
  }

  /**
   * Whether the lane sent as fast as its answers allowed for most of its drain: its demand
   * outran it, so the drain measured the lane's own speed against the quota's size, not the
   * quota's time scale (a script looping over items drains a 60-per-hour quota in a second).
   */
  #saturated(): boolean {
    return 2 * this.#eagerSends > this.#sends
  }

  /** The lane's time scale: 1 = the paper's. */
  get value(): number {
    return this.state.drain
  }

  /**
   * The lane's first 429 that counts as congestion, `drainMs` after its first admission
   * (undefined: never admitted), with `admissions` admitted before it; `alone`: no other attempt
   * of the lane was in flight at it. Measured once: a later spell starts from a lane already
   * paced, whose 429s say how it paces, not how long the quota lasted.
   */
  noteFirstCongestion(drainMs: number | undefined, admissions: number, alone = true): void {
    if (this.state.measured) return
    this.state.measured = true
    this.noteQuotaReached(admissions)
    // Never admitted: the lane came to a quota already dry, and its first 429 says nothing about
    // how long the quota lasted.
    if (drainMs === undefined) return
    // Coming late only ever shortens a drain: a long one counts from the lane's first admission.
    if (drainMs > this.o.drainBandHighMs) this.state.drain = drainMs / this.o.drainReferenceMs
    else if (drainMs < this.o.drainBandLowMs && alone && !this.#saturated() && admissions >= this.o.drainShortMinAdmissions) {
      this.state.drain = Math.max(drainMs, 1) / shortDrainReferenceMs(this.o)
    }
  }
}

/**
 * What a drain below the band is measured against: the geometric middle of the band's low edge
 * and the k = 1 median (60 s). A fleet on a quota a few times faster straddles the edge, and the
 * median read its lanes just under the edge as 4 × too fast (k = 0.3 lost a status-only cell,
 * 1.28 → 1.33 × the oracle); the edge itself read a 10 × faster quota as 2.5 × (k = 0.1 gained
 * no cell).
 */
function shortDrainReferenceMs(o: ScaleConstants): number {
  return Math.sqrt(o.drainBandLowMs * o.drainReferenceMs)
}

/** A saved time scale, checked; undefined when absent or implausible (the lane measures again). */
export function parseTimeScale(value: unknown): TimeScaleState | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const v = value as Record<string, unknown>
  const drain = v.drain
  if (typeof drain !== 'number' || !Number.isFinite(drain) || drain < 1e-6 || drain > 1e6 || typeof v.measured !== 'boolean') return undefined
  return { drain, measured: v.measured }
}
