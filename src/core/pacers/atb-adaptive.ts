// polite-fetch's default ATB pacer. See docs/algorithms.md for the reasoning; in short:
// - free until the lane has seen congestion (429/503) or a quota hint;
// - server guidance first: Retry-After gates the lane; with an announced quota rate the lane
//   keeps to its share of what the fleet may spend (atb-quota.ts), otherwise remaining/reset
//   is spread when the current pace would exhaust it; a lump a long Retry-After names (a
//   stepped quota's next step) is spent as it lands, one attempt per answer, while the lane's
//   own attempts at named times say they bring lumps (atb-lump.ts);
// - status-only inference: a token bucket whose rate is bounded by what the lane has
//   actually been getting through, falls back to the admitted rate on a 429 (once per
//   flight of in-flight requests; the first paced send drawn within one spacing), and
//   grows slowly with time — not per success — while the lane is using its rate, more
//   slowly still on a plateau near the rate of its last cut;
// - a cold start is not inference: a lane with too few successes to measure anything
//   starts pacing like UB's first step (about a second), or at the server's Retry-After;
// - every duration runs on the lane's time scale: the announced window, or how long the
//   quota lasted before the lane's first 429 (atb-time-scale.ts).
//
// The status-only rules are a state machine over the lane's phase (AtbPhase), one small function
// per rule; the mutable state is grouped by concern (the token bucket, the cut memory, slow start's
// clock, the lane's own traffic). One pacer exists per lane and thousands of lanes may sit idle,
// so the pacer is a class of plain fields and three small records, and its logs and server
// guidance are allocated when first needed. Options and internal constants: atb-options.ts,
// atb-constants.ts.
import type { Pacer, PacerInit, PacerState, Signal } from '../types.js'
import {
  absorbGuidance,
  CLOCK_TICK_MS,
  emptyGuidance,
  explainedByQuota,
  gateDelayMs,
  hasLiveHint,
  MAX_GUIDANCE_AHEAD_MS,
  noteSent,
  resetPaceDelayMs,
  spreadDelayMs,
  type QuotaGuidance,
} from './atb-quota.js'
import { OutcomeLog, TimeRing } from './atb-rate.js'
import { LaneTimeScale } from './atb-time-scale.js'
import { LumpSpending } from './atb-lump.js'
import { readsAsAnnounced } from './inferred-window.js'
import { matchingState } from './pacer-state.js'
import { LOG_ENTRIES, parseAtbState, SEND_LOG_ENTRIES, STATE_VERSION } from './atb-state.js'
import type { ResolvedAtbOptions } from './atb-options.js'

export const ATB_KIND = 'atb'
const EPSILON = 1e-9
/** Around a burst start the rate is searched by halving (as TCP halves its window on a loss). */
const BURST_HALVING = 0.5
/** The window of the quota the options were measured on (the paper's: 100 per 75 s). */
const MEASURED_WINDOW_MS = 75_000
/** That quota's refill rate (units/s): a fleet's quota rate over it is the quota's time scale's inverse. */
export const MEASURED_QUOTA_PER_SECOND = 100 / (MEASURED_WINDOW_MS / 1000)
/**
 * A lane never admitted (a lone call meeting 429s, or one of many that all found the quota
 * empty from their first attempt) searches for the quota's time scale as exponential backoff
 * does: about a second first, then doubling, so F failures cost about 2^F seconds at any scale
 * (×1/8 per 429 made a lone call's third try wait 2 minutes). A lane admitted before, still
 * without two successes to measure, keeps the steeper cold back-off (coldBackoffFactor): its
 * 429s say that others spend the quota it was getting.
 */
const NEVER_ADMITTED_RATE_FACTOR = 2
const NEVER_ADMITTED_BACKOFF = 0.5
/** Retry-After counts whole seconds; `retry-after-ms` (Signal.retryResolutionMs) says finer. */
const RETRY_RESOLUTION_MS = 1000
/** A refill time a float's noise over whole seconds is on them: the same ceiling at every scale. */
const UNIT_ROUNDING = 1e-9

/**
 * The lane's phase, the state machine of the status-only rules:
 * - `free`: no congestion seen (or calm again after calmAfterMs): no cost, only server guidance;
 * - `slowStart`: the first 429 came from a burst of concurrent callers; every success multiplies
 *   the rate (burstStartGrowth) until a 429 that follows a success ends it;
 * - `pacing`: a token bucket at the rate read from what got through, growing slowly with time.
 * Any 429 that counts as congestion leaves `free`; calm returns the lane to `free`.
 */
export type AtbPhase = 'free' | 'slowStart' | 'pacing'

/** The default ATB pacer, with the one input AATB gives it beyond the Pacer seam. */
export interface AtbLanePacer extends Pacer {
  /**
   * This lane's fair fraction (0, 1] of the quota, from a fleet view (AATB's aggregate);
   * undefined without one. It bounds the quota share's spacing by the lane's fair turn.
   */
  fleetShare: number | undefined
  /**
   * The quota's time scale given from outside the lane: from a fleet view (AATB: the paper's quota
   * rate over the fleet's quota rate), or the true one in the simulator's evaluation-only
   * `atb-known-scale`; undefined without one. It takes the place of the lane's own measurement of
   * how long the quota lasted, which one lane reads too noisily (docs/algorithms.md, "What
   * measuring the time scale costs"); an announced RateLimit-Policy window still comes first.
   */
  fleetTimeScale: number | undefined
  /** The fleet's quota's time scale, as `fleetTimeScale` but not discounted for a light lane (AATB). */
  fleetQuotaScale: number | undefined
  /**
   * What a live RateLimit hint says: the units the server counted as left, and the lane's own
   * sends since that count (not yet in it); undefined without a live hint.
   */
  serverCount(now: number): { remaining: number; sentSince: number } | undefined
  /** Whether the lane is spending a lump the server named (one attempt at a time, as the answers come). */
  readonly spendsLump: boolean
}

export function createAtbPacer(o: ResolvedAtbOptions, init: PacerInit): AtbLanePacer {
  return new AtbPacer(o, init)
}

/** The token bucket the lane paces with while it is congested. */
interface Bucket {
  /** Units per second (Infinity while free). */
  rate: number
  /** Tokens as of `refilledAt` (a debt below 0 after a costly attempt or a cut). */
  tokens: number
  refilledAt: number
}

/** What the lane remembers of its congestion: the spell it is in and the cut that last hit it. */
interface CutMemory {
  /** When congestion last cut the rate (the plateau, the calm timer and a failed probe count from it). */
  at: number
  /** When the current spell of congestion began (its successes are the lane's evidence). */
  since: number
  /** The rate the lane was pacing at when congestion last hit (0 before a paced lane was cut). */
  rate: number
  /** The rate the cut set: the share of the quota the lane learned (the ceiling's floor, the plateau's centre). */
  share: number
  /** The Retry-After (ms) of the 429 that cut (Infinity: none): a short one marks a steady quota, a long one a lump. */
  retryAfterMs: number
  /** The resolution that Retry-After was given in (ms): 1000, whole seconds, unless the server said finer. */
  retryResolutionMs: number
  /** Throttled results still expected from attempts in flight at the cut: the cut already covered them. */
  echoes: number
  /** The rate when the current cold spell began (429s, no admission since the cut; 0: not in one). */
  coldFrom: number
}

/** Slow start's clock (the `slowStart` phase). */
interface SlowStartClock {
  /** When slow start last raised the rate (one step per spacing). */
  stepAt: number
  /** When slow start last ended (−Infinity: never): the ramp rule applies for a minimum span after. */
  endedAt: number
  /** The rate at the lane's last paced send: in slow start a send's gap is judged against it. */
  sendRate: number
}

class AtbPacer implements AtbLanePacer {
  fleetShare: number | undefined = undefined
  fleetTimeScale: number | undefined = undefined
  fleetQuotaScale: number | undefined = undefined
  /** Where the lane is in its life (see AtbPhase). */
  #phase: AtbPhase = 'free'
  readonly #bucket: Bucket
  readonly #cut: CutMemory = { at: 0, since: 0, rate: 0, share: 0, retryAfterMs: Infinity, retryResolutionMs: RETRY_RESOLUTION_MS, echoes: 0, coldFrom: 0 }
  readonly #slowStart: SlowStartClock = { stepAt: 0, endedAt: -Infinity, sendRate: 0 }
  // The lane's own traffic.
  #createdAt: number
  /** When the lane was first admitted (undefined: never, or not since it was restored). */
  #firstAdmittedAt: number | undefined = undefined
  /** The quota's time scale as the lane measured it, while no window is announced. */
  readonly #timeScale: LaneTimeScale
  /** The time scale of the quota rate the user gave (`quotaPerSecond`), in place of the lane's measurement. */
  readonly #givenScale: number | undefined
  #inFlight = 0
  #lastSendAt: number | undefined = undefined
  /** Recent sends (time, cost); allocated at the first send. */
  #sends: TimeRing | undefined = undefined
  /** Recent outcomes; allocated at the first result. */
  #log: OutcomeLog | undefined = undefined
  /** Server guidance; allocated when a response first carries any. */
  #guidance: QuotaGuidance | undefined = undefined
  /** Whether the lumps a long Retry-After names are spent as they land (atb-lump.ts). */
  readonly #lump = new LumpSpending()
  /** When the lump the lane spends (or awaits) was named to land. */
  #lumpNamedAt = 0
  /** The round trip of the lane's last attempt answered with no other out: a lump's pace. */
  #answerMs = 0

  constructor(
    private readonly o: ResolvedAtbOptions,
    init: PacerInit,
    private readonly random = init.random,
  ) {
    this.#bucket = { rate: Infinity, tokens: o.burstUnits, refilledAt: init.now }
    this.#createdAt = init.now
    const saved = matchingState(init.state, ATB_KIND, STATE_VERSION)
    const restored = saved ? parseAtbState(saved, o, init.now) : undefined
    this.#timeScale = new LaneTimeScale(o, restored?.timeScale)
    this.#givenScale = o.quotaPerSecond === undefined ? undefined : MEASURED_QUOTA_PER_SECOND / o.quotaPerSecond
    if (restored) {
      this.#phase = restored.congested ? 'pacing' : 'free'
      this.#bucket.rate = restored.rate
      this.#bucket.tokens = restored.tokens
      this.#bucket.refilledAt = restored.savedAt // tokens were counted up to the save; the gap since refills them
      this.#cut.share = restored.shareEstimate
      this.#cut.rate = restored.congestionRate
      this.#cut.at = restored.lastCongestionAt
      this.#cut.since = restored.congestedSince
      this.#createdAt = restored.createdAt
      this.#guidance = restored.guidance
      if (restored.log.length > 0) this.#log = new OutcomeLog(LOG_ENTRIES, restored.log)
      for (const [time, cost] of restored.sends) this.#sendLog().push(time, cost)
      if (restored.sends.length > 0) this.#lastSendAt = this.#sendLog().timeAt(this.#sendLog().length - 1)
    }
  }

  #outcomes(): OutcomeLog {
    return (this.#log ??= new OutcomeLog(LOG_ENTRIES))
  }

  #sendLog(): TimeRing {
    return (this.#sends ??= new TimeRing(SEND_LOG_ENTRIES))
  }

  #available(now: number): number {
    if (!Number.isFinite(this.#bucket.rate)) return Infinity
    return Math.min(this.o.burstUnits, this.#bucket.tokens + (Math.max(0, now - this.#bucket.refilledAt) / 1000) * this.#bucket.rate)
  }

  #pacePerSecond(now: number): number {
    const sends = this.#sends
    if (sends === undefined) return 0
    let units = 0
    for (let i = sends.length - 1; i >= 0; i--) {
      if (sends.timeAt(i) <= now - this.o.paceWindowMs) break
      units += sends.valueAt(i)
    }
    return units / (this.o.paceWindowMs / 1000)
  }

  #admitted(now: number, since: number): number {
    return this.#outcomes().admittedPerSecond(now, this.#scaled(this.o.windowMs), since, this.#spanFloorMs(now), this.o.minSamples, this.#scaled(CLOCK_TICK_MS))
  }

  /**
   * The shortest span a rate is read over: `minSpanMs`, so that one early success does not read
   * as a high rate, but never longer than the lane has been admitted through once that holds
   * `minSamples` admissions. Time before the lane's first admission is time it did not watch: a
   * loop that drained a 20/s quota in 40 ms had its 21 attempts read over 10 s as 2.1/s and paced
   * its quota at 0.7/s (60 calls took 24 s where exponential backoff takes 2.2 s).
   */
  #spanFloorMs(now: number): number {
    const floorMs = this.#scaled(this.o.minSpanMs)
    const firstAt = this.#firstAdmittedAt
    if (firstAt === undefined || now - firstAt >= floorMs) return floorMs
    const watchedMs = now - firstAt + this.#scaled(CLOCK_TICK_MS)
    return this.#outcomes().counts(now, watchedMs).admitted >= this.o.minSamples ? watchedMs : floorMs
  }

  /**
   * Whether the lane has seen enough successes since `since` for a rate read from them to
   * mean anything. One success over the 10 s minimum span reads as 0.1/s; with none it reads
   * as 0. Either would be a rate invented from (almost) no data, and a lane paced at it
   * waits tens of seconds for its retry.
   */
  #hasEvidence(now: number, since: number): boolean {
    const span = Math.max(this.#scaled(this.o.minSpanMs), now - since)
    return this.#outcomes().counts(now, span).admitted >= this.o.minEvidence
  }

  /** The most the rate may be: a margin over what the lane has been getting through. */
  #ceiling(now: number): number {
    const o = this.o
    const admitted = this.#admitted(now, this.#createdAt)
    return Math.min(o.maxRatePerSecond, Math.max(this.#minRate(), o.rateMargin * Math.max(admitted, this.#cut.share)))
  }

  /**
   * Near the rate at which the lane was last cut, and soon after it, growth slows (a plateau,
   * as TCP CUBIC's): in an overloaded fleet the capacity has not moved, so probing it again at
   * full speed only buys the next 429. Far from it, or once the plateau has lasted
   * `plateauMs` without a 429 (capacity may have freed up), growth is at full speed again.
   */
  #onPlateau(now: number): boolean {
    const o = this.o
    const reference = this.#cut.rate > 0 ? this.#cut.rate : this.#cut.share
    const sinceCutMs = now - this.#cut.at
    const steady = this.#steadyPlateau(now, sinceCutMs)
    const band = steady ? o.steadyPlateauBand : o.plateauBand
    const plateauMs = this.#scaled(steady ? o.steadyPlateauMs : this.#lumpCut() ? Math.max(o.plateauMs, o.lumpPlateauMs) : o.plateauMs)
    return sinceCutMs < plateauMs && Math.abs(this.#bucket.rate - reference) < band * reference
  }

  /**
   * Whether the lane's last cut came from a 429 with a long Retry-After: a quota refilled in
   * lumps (a bucket refilled every minute answers with the time to its next step), empty until
   * the next one lands. The cut rate is the lane's share of one lump. Part of the plain 30 s
   * plateau runs out behind the gate, and a lane growing at full speed through the next lump
   * empties it early: on a stepped bucket every busy lane met one 429 per step that way.
   */
  #lumpCut(): boolean {
    return this.#lumpCutOn(this.#scale())
  }

  /**
   * Whether the lane spends a lump the server named: congested, its last cut a lump's, lumps
   * trusted. AATB's fleet share yields to it as to the server's count where the lane's fair part
   * of the lump holds a unit (aatb.ts spendsLumpPart): a lane that kept to its share left each
   * step's surplus to come back at the share's pace (stepped Retry-After: 1.11–1.31 × the oracle
   * at every k, 3 of 15 cells).
   */
  #spendingLump(): boolean {
    return this.#congested() && this.#lumpCut() && this.#lump.trusted()
  }

  get spendsLump(): boolean {
    return this.#spendingLump()
  }

  /**
   * A 429 ended the lump the lane was spending: the quota ran out, which says nothing about the
   * lane's rate. A long Retry-After names the next lump; a short one (or none) says the quota comes
   * back unit by unit, and the lane paces again.
   */
  #lumpRanOut(now: number, signal: Signal): void {
    this.#noteRetryAfter(now, signal)
    if (signal.retryAt !== undefined && this.#lumpCut() && !this.#unitLump(now)) this.#nameLump(signal.retryAt)
    else this.#lump.trickled()
  }

  /**
   * Whether the lump just spent brought at most one unit to a lane that drained the quota itself:
   * the named time was one unit's refill (a slow token bucket's Retry-After), and the quota comes
   * back unit by unit, as a short Retry-After says. Spent as lumps, a script's loop sent each call
   * as soon as the one before was answered and met a 429 on every call: 300 calls on 100 per
   * 12.5 minutes (k = 10), 200 429s; paced again, 19, at the same completion (1.00 × the oracle).
   * Every grid byte-identical. (Kept for good instead of until the next named time is admitted: the
   * stepped and fixed-window lone batches, 8 in flight, took 1.13–1.33 × where they took 1.01 ×.)
   */
  #unitLump(now: number): boolean {
    return this.#timeScale.drainedItself && this.#outcomes().counts(now, now - this.#lumpNamedAt).admitted <= 1
  }

  #nameLump(retryAt: number): void {
    this.#lump.named(retryAt)
    this.#lumpNamedAt = retryAt
  }

  /** The Retry-After of the 429 that cut, and the resolution the server gave it in. */
  #noteRetryAfter(now: number, signal: Signal): void {
    this.#cut.retryAfterMs = signal.retryAt === undefined ? Infinity : signal.retryAt - now
    const resolution = signal.retryResolutionMs
    this.#cut.retryResolutionMs = resolution !== undefined && resolution > 0 && resolution < RETRY_RESOLUTION_MS ? resolution : RETRY_RESOLUTION_MS
  }

  /** Whether the last cut's Retry-After is long on time scale `scale` (see lumpCut). */
  #lumpCutOn(scale: number): boolean {
    return Number.isFinite(this.#cut.retryAfterMs) && this.#cut.retryAfterMs > this.#steadyRetryAfterLimitMs(scale)
  }

  /**
   * The longest Retry-After that marks a continuously refilled quota on time scale `scale`. Never
   * under steadyRetryAfterMs: Retry-After counts whole seconds, so a continuous bucket answers 1 s
   * however fast it refills (on a faster scale a scaled limit read every such 429 as a lump's, and
   * the lane kept its k = 1 durations).
   * With a fleet view (AATB) or the user's `quotaPerSecond` the quota's rate Q is given, and a
   * bucket refilled continuously at Q names at most one unit's refill, 1/Q, rounded up to the
   * Retry-After's resolution (whole seconds, or the millisecond of a `retry-after-ms`): a longer
   * Retry-After names a lump. In whole seconds a step under a second away reads "1" as one unit's
   * refill does, so at k = 0.1 (a 6 s step) part of the steps go unread; in milliseconds they are told apart (stepped cells 5 → 9 of 15 at
   * k = 0.1, none breaking). The fitted 2 s (on the lane's scale) had read a stepped bucket's 2 s
   * at k = 0.1 and 1 and its 9–20 s at k = 10 as steady (scale grid `aatb`, 10 seeds: 293 → 296 of
   * 360, concurrent 226 → 229 of 270, none lost; the headline's 180 `aatb` rows none beyond their
   * 95% intervals).
   */
  #steadyRetryAfterLimitMs(scale: number): number {
    const givenScale = this.#givenQuotaScale()
    if (givenScale !== undefined) {
      // One unit's refill, in the resolution the server gave the Retry-After in, rounded up.
      const resolutionMs = this.#cut.retryResolutionMs
      const unitsOfResolution = (givenScale / MEASURED_QUOTA_PER_SECOND) * (RETRY_RESOLUTION_MS / resolutionMs)
      return resolutionMs * Math.max(1, Math.ceil(unitsOfResolution - UNIT_ROUNDING))
    }
    return this.o.steadyRetryAfterMs * Math.max(1, scale)
  }

  /**
   * A 429 with a Retry-After of a second or so says the quota refills continuously and is
   * empty right now: the fleet is spending exactly its refill. Its capacity frees up only as
   * other clients finish, so a busy lane that probes again after the plain plateau only buys
   * the next 429 (in the simulator, 20 sequential clients over 1.6 × the quota paid about 65
   * such 429s per run). Such a lane keeps a longer and wider plateau. A light lane keeps the
   * plain one: a long plateau after its rare late 429 took runs of 100 light clients to up to
   * 1.27 × UB's time. A lane reading a quota count leaves this to the quota pacing.
   */
  #steadyPlateau(now: number, sinceCutMs: number): boolean {
    const o = this.o
    if (o.steadyPlateauMs <= o.plateauMs || sinceCutMs >= this.#scaled(o.steadyPlateauMs)) return false
    return this.#steadyLane(now, o.steadySuccesses)
  }

  /**
   * Whether the lane's last cut came from a 429 with a short Retry-After (a continuously
   * refilled quota, empty right now), no quota count guides the lane, and it had at least
   * `successes` admissions within `steadyWindowMs`.
   */
  #steadyLane(now: number, successes: number): boolean {
    const o = this.o
    if (!(this.#cut.retryAfterMs <= this.#steadyRetryAfterLimitMs(this.#scale()))) return false
    if (this.#guidance !== undefined && hasLiveHint(this.#guidance, now)) return false
    return this.#outcomes().counts(now, this.#scaled(o.steadyWindowMs)).admitted >= successes
  }

  /**
   * Growth per second while the lane is using its rate. On a plateau it is slow. After a steady
   * lane's long plateau has run out without a 429, it doubles every `steadyGrowthDoublingMs`:
   * capacity frees up only as other clients finish, and the lane left last with a backlog
   * has to climb from its share to the whole quota (at a constant 2%/s the last of 5 clients
   * over 700 requests took 1.16 × UB's time, alone for up to 200 s). Only a lane busy enough
   * to carry a backlog climbs faster: with the plain busy test, 20 light clients' faster
   * probes cost 429s.
   */
  #growthRate(now: number): number {
    const o = this.o
    if (this.#onPlateau(now)) return this.#growthPerSecond() * o.plateauGrowthFactor
    if (o.steadyGrowthDoublingMs > 0 && o.steadyPlateauMs > o.plateauMs) {
      const pastPlateauMs = now - this.#cut.at - this.#scaled(o.steadyPlateauMs)
      if (pastPlateauMs > 0 && this.#steadyLane(now, Math.max(o.steadySuccesses, o.steadyGrowthSuccesses))) {
        return this.#growthPerSecond() * Math.min(o.steadyMaxGrowthFactor, 2 ** (pastPlateauMs / this.#scaled(o.steadyGrowthDoublingMs)))
      }
    }
    return this.#growthPerSecond()
  }

  /**
   * The lane's time scale: the window its quota announced (RateLimit-Policy) over the 75 s window
   * of the paper's quota (100 per 75 s), at which every duration and rate of the options was
   * measured; without a window, the fleet's (AATB), the one the user's quota rate gives (`quotaPerSecond`), or
   * what the lane measured (atb-time-scale.ts: how long the quota lasted).
   */
  #scale(): number {
    const windowMs = this.#guidance?.windowMs
    if (windowMs !== undefined) return windowMs / MEASURED_WINDOW_MS
    const measured = this.fleetTimeScale ?? this.#givenScale ?? this.#timeScale.value
    // A quota that comes back in lumps (the last cut's Retry-After is long on the quota's scale:
    // a stepped bucket's time to its next step) gates the lane itself. Alone, the lane's own
    // durations are never stretched past their k = 1 values there (stretched, stepped
    // Retry-After runs took 1.1–1.3 × the oracle at k = 10 and 60, where they met the line
    // unstretched). With AATB's fleet view, "long" is judged on the fleet's quota scale, not on
    // the lane's trust-discounted one, which stretches a light lane's durations many times past
    // the quota's: on it a light lane read no step of an 80-per-hour quota as a lump and backed
    // off for hours (one lane of real-trace-800 at k = 60 waited 12 h). While it spends lumps it
    // trusts, the lane runs on that fleet scale (at 1 instead, AATB's stepped Retry-After cells at
    // k = 10 and 60 took 1.11–1.24 × the oracle where the fleet scale met 1.10: 8 cells); the
    // server's Retry-After gates each lump, so an aggregate can only time the lane within it.
    // A lane that stopped trusting lumps runs at the k = 1 values, or on the quota's scale where
    // that is faster (the operator's rate, or a short drain): at k = 0.1 the k = 1 values had a
    // request's third retry wait 60 s in a run the oracle ends in 42 s (`aatb` stepped
    // Retry-After at k = 0.1, 10 seeds: 1.241 → 1.126 × the oracle, paper and concurrent clients
    // alike; no cell changes; in the k = 1 headline only 10 `atb` rows move, none beyond its 95%
    // interval).
    const given = this.#givenQuotaScale()
    const quotaScale = given ?? measured
    if (this.#lumpCutOn(quotaScale)) return given !== undefined && this.#lump.trusted() ? given : Math.min(1, quotaScale)
    return measured
  }

  /**
   * The time scale of a quota rate given from outside the lane: the operator's, through the fleet's
   * view (AATB), or the user's (`quotaPerSecond`); undefined when the lane has only its own reading.
   * Either tells one unit's refill, so the lump test and the scale of a lane spending lumps are the
   * same for both (told the rate, stepped `retry-after-ms` cells of the scale grid at k = 0.1 / 1 /
   * 10 / 60: 5 / 9 / 13 / 13 → 14 / 13 / 15 / 14 of 15; in whole seconds 274 → 275 of 360 cells;
   * 14 / 13 / 14 / 14 and 280 after the cold start moved to the lane's scale).
   */
  #givenQuotaScale(): number | undefined {
    return this.fleetQuotaScale ?? this.#givenScale
  }

  /** A duration of the options, on the lane's time scale. */
  #scaled(ms: number): number {
    return ms * this.#scale()
  }

  #growthPerSecond(): number {
    return this.o.growthPerSecond / this.#scale()
  }

  #minRate(): number {
    return this.o.minRatePerSecond / this.#scale()
  }

  /** Whether the lane paces (slow start or pacing): it has met congestion and not yet turned calm. */
  #congested(): boolean {
    return this.#phase !== 'free'
  }

  #calm(now: number): boolean {
    return this.#congested() && now - this.#cut.at >= this.#scaled(this.o.calmAfterMs)
  }

  #becomeCalm(): void {
    this.#phase = 'free'
    this.#cut.coldFrom = 0
    this.#bucket.rate = Infinity
    this.#bucket.tokens = this.o.burstUnits
  }

  /**
   * A 429 (or 503) that counts as congestion: the rules below, one function each, in the order
   * they are tried. An echo of the last cut changes nothing; otherwise the lane records the cut,
   * picks its next rate by its phase (the first cut, slow start, just out of slow start, measured,
   * cold) and sets up its first paced send.
   */
  #congestionEvent(now: number, signal: Signal): void {
    if (this.#ignoreEcho()) return
    const first = this.#phase === 'free'
    if (first) this.#measureDrain(now)
    const since = first ? this.#createdAt : this.#cut.since
    const measured = this.#hasEvidence(now, since)
    this.#cut.rate = first ? 0 : this.#bucket.rate
    this.#noteRetryAfter(now, signal)
    // Another attempt of this lane still in flight at its first 429: concurrent callers burst
    // into the quota, so what got through measures its capacity, not its rate.
    const burst = first && this.#inFlight > 0 && this.o.burstStartGrowth > 1
    const next = first ? this.#firstCutRate(now, measured, burst) : this.#nextCutRate(now, since, measured)
    this.#applyCut(now, next)
    if (signal.retryAt !== undefined && this.#lumpCut()) this.#nameLump(signal.retryAt)
    this.#firstPacedSend(now, signal, first, measured, burst)
    this.#bucket.refilledAt = now
    this.#cut.echoes = Math.max(0, this.#inFlight)
  }

  /** The lane's first congestion: how long the quota lasted since its first admission (the time scale). */
  #measureDrain(now: number): void {
    const admissions = this.#outcomes().counts(now, Infinity).admitted
    // inFlight counts the lane's other attempts still out (this one is already answered).
    this.#timeScale.noteFirstCongestion(this.#firstAdmittedAt === undefined ? undefined : now - this.#firstAdmittedAt, admissions, this.#inFlight === 0)
  }

  /** A throttled answer to an attempt sent before the last cut: the cut already covered it. */
  #ignoreEcho(): boolean {
    if (this.#cut.echoes <= 0) return false
    this.#cut.echoes--
    return true
  }

  /** The lane's first cut: it leaves the free phase, for slow start after a burst, else for pacing. */
  #firstCutRate(now: number, measured: boolean, burst: boolean): number {
    this.#phase = burst ? 'slowStart' : 'pacing'
    this.#cut.since = now
    if (burst) {
      this.#slowStart.stepAt = now
      return this.#coldStartPerSecond()
    }
    return measured ? this.#measuredFirstCutRate(now) : this.#coldStartRate()
  }

  /** Start from what got through, and at most a fraction of what was sent. */
  #measuredFirstCutRate(now: number): number {
    const o = this.o
    const spanMs = Math.max(this.#spanFloorMs(now), Math.min(this.#scaled(o.windowMs), now - this.#createdAt))
    const sent = this.#outcomes().counts(now, spanMs)
    const attempted = (sent.admitted + sent.rejected) / (spanMs / 1000)
    return Math.min(o.fallbackFactor * this.#admitted(now, this.#createdAt), o.firstCutFactor * attempted)
  }

  /**
   * UB's first step on the lane's time scale. A lane that knows no scale (never admitted, or its
   * drain within the k = 1 band) keeps the absolute second, and the never-admitted doubling finds
   * any scale from it (the lone call); a lane told its quota's rate, or one whose drain read a
   * slower quota, starts there (told the rate, the scale grid's stepped status-only cells at k = 10
   * and 60 went 10 / 9 → 12 / 12 of 15, 280 of 360 cells in all against 275; the default's 429s at
   * k = 10 and 60 fell 3–5% with no cell changed, and every k = 1 headline row is byte-identical).
   */
  #coldStartPerSecond(): number {
    return this.o.coldStartRatePerSecond / this.#scale()
  }

  /**
   * Cold start: nothing to measure a share from. Pace like UB's first step (its first retry
   * waits U(0.1 s, 1 s)), not at a rate invented from one data point. A lane never admitted at
   * all has no evidence that anyone else competes for the quota: its first spacing is UB's whole
   * first step.
   */
  #coldStartRate(): number {
    const rate = this.#coldStartPerSecond()
    return this.#neverAdmitted() ? NEVER_ADMITTED_RATE_FACTOR * rate : rate
  }

  /** A further cut of a congested lane, by its phase. */
  #nextCutRate(now: number, since: number, measured: boolean): number {
    if (this.#phase === 'slowStart') return this.#slowStartCutRate(now)
    if (!measured) return this.#coldBackoffRate()
    if (now - this.#slowStart.endedAt < this.#scaled(this.o.minSpanMs)) return this.#rampCutRate(now, since)
    return this.#measuredCutRate(now, since)
  }

  /**
   * In slow start: once something got through since congestion began, slow start overshot and
   * the rate before its last step is the one found (a rate read off the successes would be
   * averaged over a span mostly spent far below it); until then the burst's capacity is not
   * refilled yet: halve, and keep starting slowly.
   */
  #slowStartCutRate(now: number): number {
    const lastAdmittedAt = this.#outcomes().lastAdmittedAt()
    if (lastAdmittedAt === undefined || lastAdmittedAt <= this.#cut.since) return this.#bucket.rate * BURST_HALVING
    this.#phase = 'pacing'
    this.#slowStart.endedAt = now
    return (this.#bucket.rate / this.o.burstStartGrowth) * this.o.maxCutFactor
  }

  /**
   * Just out of slow start: the admitted rate is averaged over a span mostly spent on the ramp,
   * far below the rate found. Halve towards it instead.
   */
  #rampCutRate(now: number, since: number): number {
    return Math.max(this.#bucket.rate * BURST_HALVING, this.o.fallbackFactor * this.#admitted(now, since))
  }

  /** The measured cut: to what got through, by at least maxCutFactor, deeper after a failed probe. */
  #measuredCutRate(now: number, since: number): number {
    const o = this.o
    const next = Math.min(this.#bucket.rate * o.maxCutFactor, o.fallbackFactor * this.#admitted(now, since))
    return this.#probeFailed(now) && !this.#timeScale.drainedItself ? next * Math.min(1, o.steadyProbeCutFactor) : next
  }

  /**
   * A probe failed: the lane got through after its last cut, grew, and met a 429 that says the
   * continuously refilled quota is empty. The fleet still spends all of it, so what the lane
   * regained was someone else's share (the per-flight retries of one dry spell, before any
   * success, keep the plain cut, or a lane cut twice in a row starves). Not for a lane that drained
   * the quota itself (a script's loop): what it regained was its own overshoot, and cut to 0.3 of
   * what got through it took 1.30 × the oracle on the paper's quota with Retry-After (300 calls)
   * and twice exponential backoff's time on 10 per second (200 calls: 41.9 s); now 1.04 × and
   * 20.6 s (exponential backoff 20.3 s). Every grid byte-identical: no lane of a fleet is one.
   */
  #probeFailed(now: number): boolean {
    const lastAdmittedAt = this.#outcomes().lastAdmittedAt()
    return lastAdmittedAt !== undefined && lastAdmittedAt > this.#cut.at && this.#steadyLane(now, this.o.steadySuccesses)
  }

  /**
   * Still nothing got through since congestion began: the retry a second or two later failed
   * too, so the lane is probably one of many sharing a dry quota. Back off steeply (×1/8: the
   * next retry about 16 s later) until successes give the lane something to measure. In the
   * simulator a UB-like halving cost a 100-client fleet twice the extra 429s of this, and ×1/4
   * half again as many. A lane never admitted doubles its spacing instead (the lone call).
   */
  #coldBackoffRate(): number {
    if (this.#neverAdmitted()) return this.#bucket.rate * NEVER_ADMITTED_BACKOFF
    if (this.#cut.coldFrom === 0) this.#cut.coldFrom = this.#bucket.rate
    return this.#bucket.rate * this.o.coldBackoffFactor
  }

  /**
   * The first admission after a cold spell. For a lane that drained the quota itself (a script's
   * loop over a fixed window or a bucket refilled in steps), the spell was the quota dry until its
   * next window or step, not other lanes taking its share, and the units are back: it resumes at
   * half the rate it had when the spell began, as TCP resumes after a timeout at half its window
   * (slow start's threshold), where it used to regrow from the spell's rate (×1/8 per 429) with
   * time. One client's 300 calls in a loop on 100 per 75 s: a stepped bucket 1.87 → 1.22 × the
   * oracle, a fixed window 2.41 → 1.75 ×, a sliding log 2.47 → 1.75 ×, a sliding-window counter
   * 1.58 → 1.06 × (`npm run bench:lone-client`). A lane of a fleet keeps the spell's rate: every
   * lane returning at once to its old rate herds at the step (5-client stepped runs: 3 cells lost
   * when every lane did); the scale, concurrent and headline grids are byte-identical.
   */
  #endColdSpell(): void {
    const from = this.#cut.coldFrom
    this.#cut.coldFrom = 0
    if (from > 0 && this.#phase === 'pacing' && this.#timeScale.drainedItself) {
      this.#bucket.rate = Math.min(this.o.maxRatePerSecond, Math.max(this.#bucket.rate, BURST_HALVING * from))
    }
  }

  /** Set the cut rate (within the floor and the ceiling) and mark the lane congested now. */
  #applyCut(now: number, next: number): void {
    this.#bucket.rate = Math.min(this.o.maxRatePerSecond, Math.max(this.#minRate(), next))
    this.#cut.share = this.#bucket.rate
    this.#cut.at = now
    this.#bucket.tokens = Math.min(0, this.#available(now))
  }

  /** When the first paced send after a cut may go: the bucket's tokens right after it. */
  #firstPacedSend(now: number, signal: Signal, first: boolean, measured: boolean, burst: boolean): void {
    const o = this.o
    if (first && !measured && o.honourRetryAfter && signal.retryAt !== undefined && this.#gateOpensAfter(now)) {
      // A cold lane told when to come back has no evidence that anyone else competes for
      // that moment: it retries at the server's time (the lane jitters it), not a spacing later.
      this.#bucket.tokens = o.burstUnits
    } else if (burst) {
      // The burst emptied the bucket: the first paced send waits a whole spacing.
      this.#bucket.tokens = 0
    } else if (first && o.jitterFirstCut) {
      // The lane's first cut usually comes with everybody's (the quota ran dry for the whole
      // fleet at once): the first paced send waits a uniform share of one spacing, not a full
      // one, so the fleet's retries spread over the spacing instead of landing together —
      // and a light lane, whose spacing is long, waits half of it on average.
      this.#bucket.tokens = Math.max(this.#bucket.tokens, 1 - this.random())
    }
  }

  /** Whether no attempt of this lane was ever admitted (in its log). */
  #neverAdmitted(): boolean {
    return this.#outcomes().lastAdmittedAt() === undefined
  }

  serverCount(now: number): { remaining: number; sentSince: number } | undefined {
    const guidance = this.#guidance
    if (guidance === undefined || !hasLiveHint(guidance, now)) return undefined
    return { remaining: guidance.remaining as number, sentSince: guidance.sentSinceHint }
  }

  /** Whether a Retry-After gate is closed at `now`. */
  #gateOpensAfter(now: number): boolean {
    return this.#guidance !== undefined && this.#guidance.retryAt > now
  }

  /** The server's gate first; otherwise the later of the quota's spread and the bucket's wait. */
  delayMs(now: number, cost: number): number {
    const units = Math.max(0, cost)
    const guidance = this.#guidance
    let spread = 0
    if (guidance !== undefined) {
      const gate = this.o.honourRetryAfter ? gateDelayMs(guidance, now, units) : 0
      if (gate > 0) return Math.ceil(gate)
      spread = this.#spreadMs(guidance, now, units)
      if (spread > 0 && this.#quotaFirstHolds(guidance, now)) spread = this.#spreadMs(guidance, now, units)
    }
    if (!this.#congested() || this.#calm(now)) return Math.ceil(spread)
    // A named lump is spent one attempt at a time, as fast as the answers come. While one is out,
    // its answer wakes the lane (the shell pumps a lane on every settled attempt); the wait asked
    // for meanwhile is a fallback, and an answer slower than the lane's round trip is waited for as
    // long again as it has taken (a 300 s slow answer: about 18 wake-ups, not one per millisecond).
    if (this.#spendingLump()) return Math.ceil(Math.max(spread, this.#inFlight > 0 ? this.#awaitAnswerMs(now) : 0))
    return Math.ceil(Math.max(this.#bucketDelayMs(now, units), spread))
  }

  /** The wait while an attempt is out: the lane's round trip, or as long again as the newest attempt has taken. */
  #awaitAnswerMs(now: number): number {
    const outMs = this.#lastSendAt === undefined ? 0 : now - this.#lastSendAt
    return Math.max(1, this.#answerMs, outMs)
  }

  /**
   * An announced quota's pacing holds the lane back for the first time: the quota is reached, as a
   * 429 says it is, and the lane judges whether it drained it itself (a lone lane on a token bucket
   * with RateLimit headers never meets the 429, and kept its reserve: 1.06 × the oracle, now 1.00 ×).
   * Returns whether the judgement changed the pacing. Not on a boundary or a bucket the lane inferred
   * itself (X-RateLimit): there the reserve also absorbs the inference's errors (a lone lane that spent
   * its last unit waited for a reset its model, flipping between readings, took for a boundary: 1.06 →
   * 1.22–1.27 ×). A sliding window once told is sticky, and read as an announced one.
   */
  #quotaFirstHolds(guidance: QuotaGuidance, now: number): boolean {
    if (this.#timeScale.judged || guidance.windowMs === undefined || (guidance.inferred !== undefined && !readsAsAnnounced(guidance.inferred))) return false
    this.#timeScale.noteQuotaReached(this.#outcomes().counts(now, Infinity).admitted)
    guidance.ownDrain = this.#timeScale.drainedItself
    return guidance.ownDrain
  }

  /**
   * The quota's pacing: the lane's share while a hint is live, the announced rate just after a reset.
   * On a quota that gives units back in lumps (a stepped bucket, a window) a wait read from a live
   * hint ends at its reset, where the units come back and the hint runs out; the pacing after it
   * is decided then. Without this a lane whose aged hint read empty slept through the step on its
   * longest spacing (a fair turn's stand-in), and a fleet left each step part unspent: stepped
   * RateLimit runs of 100 clients took 1.19–1.22 × the oracle, now 1.01–1.02 ×, at exponential
   * backoff's count of 429s or under (docs/algorithms.md, "A wait ends at a lumpy reset"). Not on a
   * token bucket, whose reset (its time to full) is no moment of its own while the fleet spends:
   * 100 clients then came back at their resets and met 2–3 × the 429s.
   */
  #spreadMs(guidance: QuotaGuidance, now: number, units: number): number {
    if (!hasLiveHint(guidance, now)) return resetPaceDelayMs(guidance, now, units, this.#lastSendAt)
    const spread = spreadDelayMs(guidance, now, units, this.#pacePerSecond(now), this.#lastSendAt, this.fleetShare)
    return guidance.lumpy === true ? Math.min(spread, (guidance.resetAt as number) - now) : spread
  }

  /** How long until the bucket holds the tokens a send of `units` needs (at most one burst's worth). */
  #bucketDelayMs(now: number, units: number): number {
    const need = Math.min(units, this.o.burstUnits)
    const have = this.#available(now)
    return have >= need - EPSILON ? 0 : ((need - have) / this.#bucket.rate) * 1000
  }

  onSend(now: number, cost: number): void {
    const units = Math.max(0, cost)
    if (this.#calm(now)) this.#becomeCalm()
    if (this.#congested()) this.#pacedSend(now, units)
    this.#lump.sent(now)
    this.#timeScale.noteSend(now, this.#inFlight, this.#firstAdmittedAt !== undefined)
    this.#inFlight++
    if (this.#guidance !== undefined) noteSent(this.#guidance, units, now)
    this.#lastSendAt = this.#lastSendAt === undefined ? now : Math.max(this.#lastSendAt, now)
    this.#sendLog().push(now, units)
  }

  /** A send while congested: the rate grows (or is capped after a quiet spell) and the send takes its tokens. */
  #pacedSend(now: number, units: number): void {
    const have = this.#available(now)
    const gapMs = this.#lastSendAt === undefined ? Infinity : now - this.#lastSendAt
    if (this.#usingRate(gapMs, units)) this.#grow(now, gapMs)
    // Back from a quiet spell: no more than a margin over what has been getting through.
    else this.#bucket.rate = Math.min(this.#bucket.rate, this.#ceiling(now))
    // Spending a lump runs up no debt: the bucket resumes where it was when the lump runs out.
    this.#bucket.tokens = this.#spendingLump() ? Math.max(0, have - units) : have - units
    this.#bucket.refilledAt = now
    this.#slowStart.sendRate = this.#bucket.rate
  }

  /**
   * Whether the lane sent about as soon as it could (within usingRateSlack spacings): only then
   * does it grow, so an idle lane earns no growth and a quiet spell cannot end in a burst. In slow
   * start the rate grew since the last send (on its success): the gap is judged against the
   * spacing the lane was keeping then.
   */
  #usingRate(gapMs: number, units: number): boolean {
    const keptRate = this.#phase === 'slowStart' ? this.#slowStart.sendRate : this.#bucket.rate
    return gapMs <= this.o.usingRateSlack * ((units || 1) / keptRate) * 1000
  }

  /** Growth with time, not per success: e^(g·gap). */
  #grow(now: number, gapMs: number): void {
    const g = this.#growthRate(now)
    this.#bucket.rate = Math.min(this.o.maxRatePerSecond, this.#bucket.rate * Math.exp(g * (gapMs / 1000)))
  }

  /**
   * Slow start's step on a success: the rate × burstStartGrowth, at most one step per spacing
   * (successes of attempts sent earlier, at a lower rate, say nothing about the current one; with
   * many in flight they would compound past it).
   */
  #slowStartStep(now: number): void {
    if (this.#phase !== 'slowStart' || now - this.#slowStart.stepAt < 1000 / this.#bucket.rate) return
    this.#bucket.rate = Math.min(this.o.maxRatePerSecond, this.#bucket.rate * this.o.burstStartGrowth)
    this.#slowStart.stepAt = now
  }

  onResult(now: number, signal: Signal): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1)
    if (this.#inFlight === 0 && this.#lastSendAt !== undefined) this.#answerMs = now - this.#lastSendAt
    if (signal.kind !== 'error') this.#lump.answered(signal.kind === 'ok')
    this.#timeScale.noteAnswer(now, this.#lastSendAt, this.#inFlight === 0)
    const throttled = signal.kind === 'throttled' || signal.kind === 'overloaded'
    // Judged when the lane first reaches the quota: its first 429, the quota's or congestion's alike
    // (before this one counts), unless an announced quota's pacing held it back first (delayMs).
    if (throttled && !this.#timeScale.judged) this.#timeScale.noteQuotaReached(this.#outcomes().counts(now, Infinity).admitted)
    this.#absorb(now, signal)
    if (signal.kind === 'ok') {
      this.#firstAdmittedAt ??= now
      this.#endColdSpell()
      this.#outcomes().add(now, true)
      this.#slowStartStep(now)
      if (this.#cut.echoes > 0 && this.#inFlight < this.#cut.echoes) this.#cut.echoes = this.#inFlight
    } else if (throttled) {
      this.#outcomes().add(now, false)
      if (this.#calm(now)) this.#becomeCalm()
      // A 429 that an announced quota explains (nothing left) is the quota pacing's business:
      // it knows the rate, the reset and reads the fleet. Only a 429 with units left (another
      // limit) is evidence for status-only inference. (Stepped quotas were once left to the
      // inference too: with RateLimit headers that took 1.16–1.38 × the oracle at k = 1.)
      if (this.#spendingLump()) this.#lumpRanOut(now, signal)
      else if (!explainedByQuota(signal)) this.#congestionEvent(now, signal)
    }
    // 'error': a transport failure says nothing about the quota.
  }

  /** Take in the server's guidance (a Retry-After only while honoured). */
  #absorb(now: number, signal: Signal): void {
    const heard = this.o.honourRetryAfter ? signal.retryAt !== undefined || signal.remaining !== undefined : signal.remaining !== undefined
    if (!heard) return
    const guidance = (this.#guidance ??= emptyGuidance(this.#lastSendAt))
    guidance.ownDrain = this.#timeScale.drainedItself
    absorbGuidance(guidance, now, this.o.honourRetryAfter ? signal : { ...signal, retryAt: undefined }, this.#inFlight)
  }

  retryDelayMs(now: number, failures: number, signal: Signal): number {
    const o = this.o
    let delay = 0
    const congestion = signal.kind === 'throttled' || signal.kind === 'overloaded'
    if (this.#congested() && congestion && failures > 1 && this.#hasEvidence(now, this.#cut.since) && !this.#spendingLump()) {
      delay = this.#requestBackoffMs(now, failures)
    }
    if (o.honourRetryAfter && signal.retryAt !== undefined && Number.isFinite(signal.retryAt)) {
      delay = Math.max(delay, Math.min(signal.retryAt - now, MAX_GUIDANCE_AHEAD_MS))
    }
    return Math.max(0, delay)
  }

  /**
   * Repeated 429s for one request: space its retries exponentially in units of the lane's
   * spacing, on top of the lane gate (which already gives one spacing). Only for a measured lane:
   * a cold one (too few successes) is already backing off steeply lane-wide, and a per-request
   * backoff on top would push its second retry past a 60 s call deadline.
   */
  #requestBackoffMs(now: number, failures: number): number {
    const o = this.o
    const spacingMs = 1000 / this.#bucket.rate
    const factor = o.retryBackoffFactor * this.#dryLaneFactor(now)
    return Math.min(this.#scaled(o.maxRetryBackoffMs), (2 ** Math.min(failures - 1, 30) - 1) * spacingMs * factor)
  }

  /**
   * A lane that keeps meeting 429s keeps finding the quota dry: a stepped quota (many units at
   * once, say every minute) stays empty until its next step, so a retry a few spacings later
   * mostly buys another 429. Such a lane spaces its retries harder, in proportion to the 429s it
   * met lately (a lane that meets one now and then, as on a continuously refilled quota, keeps
   * the plain backoff).
   */
  #dryLaneFactor(now: number): number {
    const o = this.o
    const rejected = this.#outcomes().counts(now, this.#scaled(o.dryLaneWindowMs)).rejected
    return Math.min(o.dryLaneMaxBackoffFactor, Math.max(1, rejected / o.dryLaneThrottles))
  }

  toJSON(now: number): PacerState {
    const guidance = this.#guidance ?? emptyGuidance()
    const sends: Array<[number, number]> = []
    const ring = this.#sends
    if (ring !== undefined) for (let i = 0; i < ring.length; i++) if (ring.timeAt(i) <= now) sends.push([ring.timeAt(i), ring.valueAt(i)])
    return {
      kind: ATB_KIND,
      version: STATE_VERSION,
      savedAt: now,
      createdAt: Math.min(this.#createdAt, now),
      congested: this.#congested(),
      rate: Number.isFinite(this.#bucket.rate) ? this.#bucket.rate : null,
      shareEstimate: this.#cut.share,
      congestionRate: this.#cut.rate,
      tokens: Number.isFinite(this.#bucket.rate) ? this.#available(now) : null,
      lastCongestionAt: this.#cut.at,
      congestedSince: this.#cut.since,
      retryAt: guidance.retryAt,
      remaining: guidance.remaining ?? null,
      resetAt: guidance.resetAt ?? null,
      sentSinceHint: guidance.sentSinceHint,
      log: this.#log === undefined ? [] : this.#log.toJSON().filter(([t]) => t <= now),
      sends,
      timeScale: { ...this.#timeScale.state },
    }
  }

  get ratePerSecond(): number {
    return this.#congested() ? this.#bucket.rate : Infinity
  }

  tokens(now: number): number {
    return this.#congested() ? this.#available(now) : Infinity
  }
}
