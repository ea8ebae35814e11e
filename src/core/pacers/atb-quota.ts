// Server guidance for the default ATB: Retry-After (`retryAt`) and the quota hints
// (`remaining` units until `resetAt`). These are lane-wide: the quota is shared by every
// caller of the lane, so one response's "wait until T" holds every attempt back.
import type { Signal } from '../types.js'
import { inferWindow, nextBoundaryAt, readsAsAnnounced, type RefillModel, type WindowEvidence } from './inferred-window.js'

export interface QuotaGuidance {
  /** Epoch ms before which nothing may be sent (the latest Retry-After seen). */
  retryAt: number
  /** Units the server said were left, as of `hintAt`; undefined until a hint arrives. */
  remaining?: number
  /** When `remaining` is replenished. */
  resetAt?: number
  /** When the hint arrived. */
  hintAt?: number
  /** Units this lane sent since the hint (they are not yet counted in `remaining`). */
  sentSinceHint: number
  /** The quota's long-run rate from the announced policy (quota / window), units/s; undefined when none. */
  quotaPerSecond?: number
  /** Units this lane has ever sent (a running count the samples refer to). */
  sentTotal: number
  /** Recent hints (see Sample), oldest first: the fleet's spending is read from them. */
  samples: Array<Sample>
  /**
   * Whether the lane drained the quota itself (atb-time-scale.ts `drainedItself`: a script's loop or
   * burst): a span its own 429's Retry-After closed is then its own doing, and the refill is
   * credited only from that time (see fleetSpending).
   */
  ownDrain?: boolean
  /**
   * Whether the latest hint looks like a quota that refills continuously at its rate: its reset
   * (time to full) is the missing units over the rate. A bucket refilled in steps, or a window,
   * announces a later reset, and between refills nothing comes back.
   */
  continuous: boolean
  /** Whether a hint could tell how the quota refills (a reset beyond the headers' one-second resolution). */
  refillKnown?: boolean
  /**
   * Whether a hint announced a reset more than one window away while at least half the quota
   * was left: a sliding window, whose counted units fade out over the following window (see
   * absorbGuidance), or whose reset moved on by exactly one window between two such hints.
   * Sticky: a later hint near empty looks like a stepped quota's.
   */
  sliding: boolean
  /**
   * Whether a hint announced a reset a whole window away (within the header's second, and more
   * than half a window and a second) while at least half the quota was left: a window, not a
   * bucket, so never read as refilling continuously unless sliding. Sticky, unless the reset moves.
   */
  windowed?: boolean
  /**
   * Whether a reset was seen to move on before it passed, by more than the headers' rounding: a
   * sliding log's (its newest entry's expiry) or a bucket's, never a fixed window's. Sticky.
   */
  resetMoves?: boolean
  /**
   * Whether a hint whose refill could be told announced a reset later than its missing units take
   * at the quota's rate: a bucket refilled in steps or a window, whose reset is when units come
   * back, not a token bucket's time to full. Sticky.
   */
  lumpy?: boolean
  /** The reset of the latest hint that announced one more than a window away. */
  farResetAt?: number
  /** The announced policy's window (ms); undefined when none. */
  windowMs?: number
  /** The announced policy's quota (units per window); undefined when none. */
  quota?: number
  /**
   * When no policy announced a window: how the quota refills, once the lane's own hints told
   * it (inferred-window.ts); `windowMs`, `quota` and `quotaPerSecond` are then the inferred ones.
   */
  inferred?: RefillModel
  /** The hints the window is inferred from; allocated at the first hint without an announced window. */
  evidence?: WindowEvidence
  /** When the lane last sent. */
  lastSentAt?: number
  /** The longest an answer took, measured whenever the lane's last attempt out was answered (ms). */
  answerMs?: number
  /**
   * Whether a fleet reading showed other lanes spending at least as much as this one: the quota
   * is shared, and the reserve is held in units (see reserveUnits). Sticky.
   */
  shared?: boolean
}

/**
 * One hint as the fleet reading uses it: [when, remaining, own units answered by then, when units
 * may come back (a Retry-After's time, else the hint's)].
 */
export type Sample = [at: number, remaining: number, ownAnswered: number, refillFrom: number]

/** `lastSentAt`: the lane's last send before its first guidance (its answer is being read). */
export function emptyGuidance(lastSentAt?: number): QuotaGuidance {
  const guidance: QuotaGuidance = { retryAt: 0, sentSinceHint: 0, sentTotal: 0, samples: [], continuous: false, sliding: false }
  if (lastSentAt !== undefined) guidance.lastSentAt = lastSentAt
  return guidance
}

/**
 * Every duration of the quota pacing is a fraction of the window the server announced
 * (RateLimit-Policy `w`), written below as its value at the window the rules were measured at:
 * 100 units per 75 s, the paper's bucket of 100 refilling 80 per minute. A quota of 3 per second
 * is then read over 0.4 s and one of 80 per hour over 45 minutes, as the paper's is over 30 s:
 * the same rules at every scale (the scale grid, `simulate --scale`).
 */
const MEASURED_WINDOW_MS = 75_000
/** A duration measured at MEASURED_WINDOW_MS, on the window the lane's quota announced. */
function onWindow(guidance: QuotaGuidance, measuredMs: number): number {
  const windowMs = guidance.windowMs
  return windowMs === undefined ? measuredMs : (measuredMs * windowMs) / MEASURED_WINDOW_MS
}
/** A unit count measured on the 100-unit quota, on the quota the lane's policy announced. */
function onQuota(guidance: QuotaGuidance, measuredUnits: number): number {
  const quota = guidance.quota
  return quota === undefined ? measuredUnits : (measuredUnits * quota) / MEASURED_QUOTA_UNITS
}
const MEASURED_QUOTA_UNITS = 100
/**
 * The fleet's spending is averaged over the hints of about this long (0.4 windows); a slow lane
 * (one send a minute) reads it between its last two hints, however far apart, up to
 * MAX_SAMPLE_AGE_MS (4 windows).
 */
const SAMPLE_WINDOW_MS = 30_000
const MAX_SAMPLE_AGE_MS = 300_000
/** Shortest span the fleet's spending is averaged over (remaining is whole units: shorter is noise). */
const MIN_SAMPLE_SPAN_MS = 3_000
/** Relative float noise in a rate computed at two time scales (≈ 1e4 ulps). */
const RATE_TIE_RATIO = 1e-12
/**
 * Relative float noise in a duration read as the difference of two epoch times and compared with
 * a threshold on the window (a sample span, a sample's age). The same times × k round differently,
 * so a span exactly on its threshold falls either side of it by noise, one way at one scale and
 * the other at another. Within this it is on it, decided as exact times decide it (75 ns of a
 * 75 s window: nothing real is that close).
 */
const DURATION_TIE_RATIO = 1e-9
/** Float noise in a count aged at a rate (units): a count within this of a whole unit is that unit. */
const UNIT_TIE = 1e-9

/** Whether `durationMs` falls short of `thresholdMs` by more than float noise (a tie is not short). */
function shorterThan(durationMs: number, thresholdMs: number): boolean {
  return durationMs < thresholdMs * (1 - DURATION_TIE_RATIO)
}
/** Whether `at` lies at least `thresholdMs` before `now`, within float noise (a tie is that long ago). */
function atLeastAgo(at: number, now: number, thresholdMs: number): boolean {
  return at <= now - thresholdMs * (1 - DURATION_TIE_RATIO)
}
/** Whether `at` lies more than `thresholdMs` before `now`, beyond float noise (a tie is not). */
function moreThanAgo(at: number, now: number, thresholdMs: number): boolean {
  return at < now - thresholdMs * (1 + DURATION_TIE_RATIO)
}
const MAX_SAMPLES = 64
/**
 * With quota guidance the fleet may spend what is left down to this reserve, over this
 * horizon, on top of the refill. The reserve absorbs the attempts other lanes have in flight
 * or decided on from older hints (a lane of a 100-client fleet reads `remaining` about once
 * a minute); spending the rest gradually, never as one burst, keeps the last units for
 * whoever needs them next. Measured in the simulator: a reserve of 3 or a 10 s horizon
 * doubles the 429s of a 100-client fleet; a reserve that grows with the fleet costs its
 * light clients completion time.
 */
const RESERVE_UNITS = 12
const SPEND_HORIZON_MS = 30_000
/**
 * The reserve on a sliding window. There a held-back unit is not a level that the refill
 * tops up but rate lost for good: a fleet spending steadily at s keeps the window's count at
 * s × window, so holding R of q units back caps it at (q − R) / q of the quota's rate (12 of
 * 100: 12% slower). Measured on a sliding-window counter (30 seeds): 12 costs 1.12–1.17 ×
 * the oracle's time, 3 brings back 429s (real-trace-800: 43 against 13 allowed).
 */
const SLIDING_RESERVE_UNITS = 6
/** Resets come in whole seconds (RateLimit `t`, Retry-After): an exemption, the header's resolution. */
const RESET_RESOLUTION_S = 1
/** Whole-second resets, read at whole-ms times: two of them a window apart differ by it ± this. */
const RESET_STEP_SLACK_MS = 1_500

/** The request quota a response announced, preferring the policy the signal names, else the tightest. */
export function quotaHintOf(signal: Signal): { quota: number; windowMs: number } | undefined {
  let best: { quota: number; windowMs: number } | undefined
  let bestRate = Infinity
  for (const policy of signal.policies ?? []) {
    if (policy.unit !== undefined && policy.unit !== 'requests') continue
    if (!(policy.quota > 0) || !(policy.windowMs !== undefined && policy.windowMs > 0)) continue
    const hint = { quota: policy.quota, windowMs: policy.windowMs }
    if (signal.policy !== undefined && policy.name === signal.policy) return hint
    const rate = policy.quota / policy.windowMs
    if (rate < bestRate) {
      bestRate = rate
      best = hint
    }
  }
  return best
}

/** Largest plausible distance into the future for a server time (a day): beyond it is nonsense, not guidance. */
export const MAX_GUIDANCE_AHEAD_MS = 86_400_000

function plausibleFuture(at: number | undefined, now: number): at is number {
  return at !== undefined && Number.isFinite(at) && at > now && at - now <= MAX_GUIDANCE_AHEAD_MS
}

/**
 * Take in what a response said. Malformed or implausible values are ignored.
 * `unitsInFlight` are the lane's other attempts still unanswered: the count may have been taken
 * before they arrived, so they stay counted against it (a lane that sends its next call while
 * the previous answer is on its way must not spend the same unit twice).
 */
export function absorbGuidance(guidance: QuotaGuidance, now: number, signal: Signal, unitsInFlight = 0): void {
  // The lane's last attempt out is answered: how long that took is an answer time.
  if (unitsInFlight <= 0 && guidance.lastSentAt !== undefined && now >= guidance.lastSentAt) {
    guidance.answerMs = Math.max(guidance.answerMs ?? 0, now - guidance.lastSentAt)
  }
  if (plausibleFuture(signal.retryAt, now)) guidance.retryAt = Math.max(guidance.retryAt, signal.retryAt)
  const { remaining, resetAt } = signal
  if (remaining !== undefined && Number.isFinite(remaining) && remaining >= 0) {
    guidance.remaining = remaining
    const previousResetAt = guidance.resetAt
    // Without a usable reset time the count cannot be spread or gated on: it is kept but
    // inert (hasLiveHint is false) until a response brings a reset.
    guidance.resetAt = plausibleFuture(resetAt, now) ? resetAt : undefined
    // A reset not yet due (beyond the headers' rounding: a fixed window's, rounded up, is announced
    // up to a second after its end) that moved on by more than the rounding on either side.
    if (previousResetAt !== undefined && previousResetAt > now + RESET_RESOLUTION_S * 1000 && guidance.resetAt !== undefined && guidance.resetAt - previousResetAt > 2 * RESET_RESOLUTION_S * 1000) {
      guidance.resetMoves = true
    }
    guidance.hintAt = now
    const sentSincePrevious = guidance.sentSinceHint
    guidance.sentSinceHint = Math.max(0, unitsInFlight)
    const announced = quotaHintOf(signal)
    const inferred = announced === undefined ? inferWindow((guidance.evidence ??= {}), now, remaining, signal.limit, guidance.resetAt, sentSincePrevious, signal.kind === 'throttled' || signal.kind === 'overloaded') : undefined
    const policy = announced ?? inferred
    guidance.inferred = inferred?.model
    guidance.quotaPerSecond = policy ? (policy.quota / policy.windowMs) * 1000 : undefined
    guidance.windowMs = policy?.windowMs
    guidance.quota = policy?.quota
    if (inferred?.model === 'fading') guidance.sliding = true
    if (inferred !== undefined && !readsAsAnnounced(inferred.model)) {
      // The evidence that gave the window also told how the quota refills (a sliding window's
      // is read as an announced one is, below; a counter's as sliding at once).
      guidance.continuous = inferred.model === 'continuous'
      guidance.refillKnown = true
    } else if (policy && guidance.resetAt !== undefined) {
      // Whole-second resets and whole-unit counts: allow a second's refill and a unit of slack.
      const perSecond = guidance.quotaPerSecond as number
      const refillS = Math.max(0, policy.quota - remaining) / perSecond
      // A quota announced as q per w is whole again within w if it is a token bucket (its reset
      // is the missing units over the rate), a fixed window, a sliding log, or a bucket refilled
      // in steps no longer than w while at least half is left (one step refills it). Only a
      // sliding-window counter announces more: the units counted in this window still weigh,
      // fading, through the next one. Its count comes back gradually as they fade, at the rate
      // the window was spent at (the quota's rate when the fleet keeps it busy): it refills
      // continuously, just without a reset that says so. (Whole-second resets: a second of slack.)
      const resetS = (guidance.resetAt - now) / 1000
      if (resetS > policy.windowMs / 1000 + 1) {
        if (remaining >= policy.quota / 2) guidance.sliding = true
        // A lane that first hears from the quota when less than half is left (most lanes of a
        // busy fleet) tells it apart by the window's boundary instead: a sliding window's reset
        // is the current window's end plus one window, so it moves on by exactly one window when
        // the next window starts. A stepped bucket's far reset moves on by whole steps, and one
        // whose step divides the window (the only way whole steps add up to it) is never
        // announced more than a window away.
        const previous = guidance.farResetAt
        if (previous !== undefined && Math.abs(guidance.resetAt - previous - policy.windowMs) <= RESET_STEP_SLACK_MS) guidance.sliding = true
        guidance.farResetAt = guidance.resetAt
      }
      // A token bucket with half its quota left is full again within half a window, a bucket
      // refilled in steps within one step (shorter than the window it announces), each give or
      // take a second (the header's rounding); a reset a whole window away then is a window's, and
      // near empty its reset (up to a window) must not read as a bucket's time to full. Fleets on
      // a fixed window: 100 clients 1.05–1.10 × the oracle without this, 1.04–1.05 × with it.
      // Not a sliding log's, whose reset (its newest entry's expiry) also lies a window away but
      // moves on with each admission: near empty the log is a bucket to a fleet, whose count at
      // 0 hides the others' spending unless the refill is credited at the quota's rate. Read as a
      // window (this rule before the reset's move refuted it), every lane retried where it
      // expected a unit back and met the others there: 5 clients met 280–1,050 429s a run, more
      // than exponential backoff's 170–440; now 9–106.
      const windowS = policy.windowMs / 1000
      if (guidance.resetMoves) guidance.windowed = false
      else if (resetS >= windowS - RESET_RESOLUTION_S && resetS > windowS / 2 + RESET_RESOLUTION_S && remaining >= policy.quota / 2) guidance.windowed = true
      // A reset within one second (the header's resolution) says nothing about the refill: a
      // 3-per-second bucket and a 1 s window both announce 1 s. The lane keeps what it knew.
      if (resetS > RESET_RESOLUTION_S || guidance.sliding) {
        guidance.continuous = guidance.sliding || (!guidance.windowed && Math.abs(resetS - refillS) <= RESET_RESOLUTION_S + 1 / perSecond)
        guidance.refillKnown = true
        if (!guidance.continuous) guidance.lumpy = true
      }
    } else {
      guidance.continuous = false
    }
    const samples = guidance.samples
    // The lane's own units the count can hold: those answered by now. The ones still in flight
    // (a burst's, sent before the lane had any guidance among them) show in later counts, and
    // counted as sent here they read as other lanes' spending between this hint and the next.
    samples.push([now, remaining, guidance.sentTotal - Math.max(0, unitsInFlight), plausibleFuture(signal.retryAt, now) ? signal.retryAt : now])
    // A sample exactly the sample window old goes, as it would with exact times: the same at every scale.
    while (samples.length > MAX_SAMPLES || (samples.length > 1 && atLeastAgo((samples[1] as Sample)[0], now, onWindow(guidance, SAMPLE_WINDOW_MS)))) {
      samples.shift()
    }
  }
}

/**
 * Whether a throttled signal is explained by the quota it announced: nothing left, and either a
 * policy (quota per window) or a limit with its reset (the lane infers the window: inferred-window.ts).
 * The quota pacing covers it: the gate holds the lane until the reset, the pacing spends what it brings.
 */
export function explainedByQuota(signal: Signal): boolean {
  if (signal.remaining === undefined || signal.remaining > 0) return false
  return quotaHintOf(signal) !== undefined || (signal.limit !== undefined && signal.limit > 0 && signal.resetAt !== undefined)
}

/** Whether the lane currently holds a quota hint that has not expired. */
export function hasLiveHint(guidance: QuotaGuidance, now: number): boolean {
  return guidance.remaining !== undefined && guidance.resetAt !== undefined && guidance.resetAt > now
}

export function noteSent(guidance: QuotaGuidance, cost: number, now?: number): void {
  if (now !== undefined) guidance.lastSentAt = now
  guidance.sentTotal += cost
  if (guidance.remaining !== undefined) guidance.sentSinceHint += cost
}

/** Hard gates: Retry-After, and an exhausted quota until it resets. 0 = open. */
export function gateDelayMs(guidance: QuotaGuidance, now: number, cost: number): number {
  let until = guidance.retryAt
  if (hasLiveHint(guidance, now)) {
    const left = (guidance.remaining as number) - guidance.sentSinceHint
    if (left <= 0 || left < cost) {
      // A known refill rate brings the missing units long before a token bucket is full
      // again (its reset): wait for them, not for the reset. Not while no hint could tell how
      // the quota refills (every reset within the headers' resolution): a 1 s window gives
      // nothing back before its reset; nor a quota the lane saw refill at a boundary.
      // An inferred boundary quota gives units back at its next boundary, which a stepped
      // bucket's reset (its time to full) may lie whole steps beyond (nextBoundaryAt).
      const refillAt = guidance.inferred === 'boundary'
        ? nextBoundaryAt(guidance.resetAt as number, guidance.windowMs, guidance.hintAt as number)
        : guidance.quotaPerSecond === undefined || !guidance.refillKnown
          ? Infinity
          : (guidance.hintAt as number) + ((cost - left) / guidance.quotaPerSecond) * 1000
      until = Math.max(until, Math.min(guidance.resetAt as number, refillAt))
    }
  }
  return Math.max(0, until - now)
}

/**
 * No herd at a reset. A hint runs out at its reset, and the lane, whose queued calls waited for
 * it, learns what the reset brought only from the answers to what it sends next. So after the
 * reset it sends one attempt and waits for the answer, for up to the longest answer time it has
 * measured; a fresh hint then takes over, and the lane spends what the server says is left. The
 * answer pumps the lane at once, so the wait is said a little at a time, as long again as the lane
 * has waited so far (from one clock tick): a queued call is not judged past its deadline on a
 * guess of when the answer comes, and the lane wakes only a few times. Once the answer is late,
 * within the window the reset opened, the lane spends at the announced rate (quota ÷ window:
 * every lane keeping to it spends no more than the window holds), never its whole backlog at
 * once: a queue of 9 released into a window of 3 is 6 429s (the ky burst: 18 429s for 12
 * calls, 9 of them at the resets). A lane that knows no window yet (none announced, not yet
 * inferred) has no rate to spend at: each attempt waits for the answer to the one before, or for
 * the answer time.
 */
export function resetPaceDelayMs(guidance: QuotaGuidance, now: number, cost: number, lastSendAt: number | undefined): number {
  const perSecond = guidance.quotaPerSecond
  const resetAt = guidance.resetAt
  const windowMs = guidance.windowMs
  if (resetAt === undefined || lastSendAt === undefined || resetAt > now) return 0
  const answerDueMs = awaitingAnswerMs(guidance, now, resetAt, lastSendAt)
  if (answerDueMs > 0) return Math.min(answerDueMs, Math.max(CLOCK_TICK_MS, now - lastSendAt))
  if (perSecond === undefined || windowMs === undefined || now >= resetAt + windowMs) return 0
  return Math.max(0, lastSendAt + (Math.max(cost, 1) / perSecond) * 1000 - now)
}

/** How long the answer to the lane's send after the reset may still take (its answer time); 0 once a hint came or it is late. */
function awaitingAnswerMs(guidance: QuotaGuidance, now: number, resetAt: number, lastSendAt: number): number {
  const answerMs = guidance.answerMs
  if (answerMs === undefined || lastSendAt < resetAt || (guidance.hintAt ?? -Infinity) >= lastSendAt) return 0
  return Math.max(0, lastSendAt + Math.max(CLOCK_TICK_MS, answerMs) - now)
}
/** The clocks' resolution (epoch ms): an exemption. */
export const CLOCK_TICK_MS = 1

/**
 * Spread what remains over the time left, but only when the lane's current pace would
 * exhaust it before the reset: a large quota never slows a clean API.
 * `pacePerSecond` is the lane's recent send rate (units/s); `lastSendAt` its last send.
 */
export function spreadDelayMs(
  guidance: QuotaGuidance,
  now: number,
  cost: number,
  pacePerSecond: number,
  lastSendAt: number | undefined,
  fleetShare?: number,
): number {
  if (!hasLiveHint(guidance, now)) return 0
  if (guidance.quotaPerSecond !== undefined) return shareDelayMs(guidance, now, cost, lastSendAt, fleetShare)
  const left = (guidance.remaining as number) - guidance.sentSinceHint
  const timeLeftMs = (guidance.resetAt as number) - now
  if (left - cost >= (pacePerSecond * timeLeftMs) / 1000) return 0
  if (left <= 0) return timeLeftMs
  const spacingMs = (timeLeftMs / left) * cost
  return lastSendAt === undefined ? 0 : Math.max(0, lastSendAt + spacingMs - now)
}

/**
 * With a known quota rate Q the fleet's spending F can be read from how `remaining` moved
 * between two of our hints: F·Δt = (remaining before − remaining now) + Q·Δt. The fleet may
 * spend Q plus what is left above a reserve, spread over a horizon. When it spends
 * more, every lane scales its own pace by target/F — lanes that all do this bring F to the
 * target within one round, without knowing how many they are. A lane the quota does not
 * constrain (plenty left, or the fleet under target) pays nothing.
 * `fleetShare` is this lane's fair fraction of the quota when a fleet view knows it (AATB's
 * aggregate); it bounds the spacing by the lane's fair turn (see fleetTurnMs).
 */
export function shareDelayMs(
  guidance: QuotaGuidance,
  now: number,
  cost: number,
  lastSendAt: number | undefined,
  fleetShare?: number,
): number {
  const rate = guidance.quotaPerSecond as number
  const fleet = fleetSpending(guidance, now)
  let left = (guidance.remaining as number) - guidance.sentSinceHint
  if (fleet !== undefined) {
    // The hint ages: since it arrived the quota refilled (if it refills continuously) and the
    // others kept spending at the rate we read — but the server's count never goes below 0.
    // A lane that sends once a minute must not act on a minute-old count.
    const drift = netRefillPerSecond(guidance.continuous ? rate : 0, fleet.perSecond - fleet.ownPerSecond)
    const ageS = Math.max(0, now - (guidance.hintAt as number)) / 1000
    left = Math.max(0, (guidance.remaining as number) + drift * ageS) - guidance.sentSinceHint
  }
  let ownPerSecond: number
  const reserve = reserveUnits(guidance, fleet, cost)
  const target = rate + ((left - reserve) * 1000) / spendHorizonMs(guidance, now, left > reserve)
  if (fleet === undefined) {
    // No reading yet: only the reserve is protected, at the quota's own rate. The count is in
    // whole units, so the reserve held is the whole number of units nearest it: 12% of a
    // quota of 3 is none (rounded up it would hold back a third of the window the server
    // just said was free).
    if (left - cost >= Math.round(reserve)) return 0
    ownPerSecond = rate
  } else {
    // Within float noise of the target is on it: the same decision at every time scale.
    if (fleet.perSecond <= target * (1 + RATE_TIE_RATIO)) return 0
    ownPerSecond = (fleet.ownPerSecond * Math.max(target, 0)) / fleet.perSecond
  }
  // A lane learns only from its own responses, so its spacing is capped: it must come back
  // to read the quota again. When even the aged hint says nothing is left, it comes back
  // later: with 100 lanes sharing 80/min a fair turn is 75 s, and probing every 60 s was
  // the main source of 429s of a 100-client fleet. A fleet whose target is nothing at all (so
  // far below the reserve that the horizon's refill does not bring it back) is as good as
  // empty for every lane: it comes back as late as on an empty quota. (That happens only when
  // the reserve is more than the horizon refills, 0.4 of the quota: a small quota shared by
  // many lanes, such as 20 lanes on 20 units. There probing at the shorter bound, 0.8 of a
  // window, was 20 lanes every 1.6 s on a quota of 10/s.)
  // An aged count a float's noise short of the cost still holds it, at every scale (an age far
  // below a millisecond is lost in one scale's epoch time and kept in another's).
  const empty = left < cost - UNIT_TIE || target <= 0
  let capMs = onWindow(guidance, guidance.sliding
    ? empty ? MAX_EMPTY_SLIDING_SPACING_MS : MAX_SLIDING_SPACING_MS
    : empty ? MAX_EMPTY_SHARE_SPACING_MS : MAX_SHARE_SPACING_MS)
  if (fleetShare !== undefined && guidance.continuous && target > 0) capMs = Math.min(capMs, fleetTurnMs(guidance, cost, target, fleetShare))
  if (lastSendAt === undefined) return 0
  const spacingMs = ownPerSecond > 0 ? Math.min(capMs, (cost / ownPerSecond) * 1000) : capMs
  return Math.max(0, lastSendAt + spacingMs - now)
}

/**
 * How fast the count moves between our hints on its own (units/s): the refill less what the other
 * lanes spend. When the count fell by our own units alone, the others spend exactly the refill, but
 * the two are read through different float operations: within float noise of each other they are
 * equal, or the aged count lands just under a whole unit at one time scale and not at another (a
 * lane that then reads its quota as empty waits out the longer spacing bound).
 */
function netRefillPerSecond(refillPerSecond: number, othersPerSecond: number): number {
  const net = refillPerSecond - othersPerSecond
  return Math.abs(net) <= RATE_TIE_RATIO * Math.max(refillPerSecond, othersPerSecond) ? 0 : net
}

/**
 * The units the fleet keeps back (see RESERVE_UNITS). What the reserve absorbs is a count of
 * attempts: those the other lanes have in flight or decided on from older hints, and the chance
 * coincidences of lanes that each spend what their own hint says. Neither shrinks with the quota:
 * 20 sequential lanes have up to 20 such attempts whether the bucket holds 20 units or 100. So on
 * a shared quota the reserve is RESERVE_UNITS (SLIDING_RESERVE_UNITS) units as measured, or the
 * share of the quota it was measured as, whichever is more, but never all of the quota: at least
 * one send's cost stays spendable (the fleet then spends at the quota's rate from a level just
 * above the reserve, and gives up at most its first burst). On the paper's 100 units both are 12:
 * nothing changes there. On 20 units refilling 10/s shared by 20 lanes, 12% of the quota (2.4
 * units) let 11.5% of attempts be refused (RateLimit headers, virtual time, 5 seeds): 1.8% with 12
 * units, 0 with 12 units and the empty-fleet spacing (shareDelayMs).
 * A lane that has not seen other lanes spend as much as it does (a lone client's own burst: its
 * fleet is itself) keeps the share of the quota: a lone lane on 3 per second needs no reserve.
 */
function reserveUnits(guidance: QuotaGuidance, fleet: { perSecond: number; ownPerSecond: number } | undefined, cost: number): number {
  const measured = guidance.sliding ? SLIDING_RESERVE_UNITS : RESERVE_UNITS
  const share = onQuota(guidance, measured)
  if (fleet !== undefined && fleet.perSecond - fleet.ownPerSecond >= fleet.ownPerSecond) guidance.shared = true
  const quota = guidance.quota
  // A lane that drained the quota itself and has seen no one else spend holds nothing back: on a
  // window that gives its units back only at its end, or as they expire, a held unit is a unit
  // lost until then (one client's 300 calls, RateLimit headers: a fixed window 1.07 → 1.00 × the
  // oracle, a sliding log 1.19 → 1.07 ×; every grid's RateLimit rows byte-identical). A lone lane
  // on a token bucket never meets the 429 that tells it so, and keeps its 12% (1.06 ×).
  if (!guidance.shared && guidance.ownDrain) return 0
  if (!guidance.shared || quota === undefined) return share
  return Math.max(share, Math.min(measured, quota - Math.max(cost, 1)))
}

/**
 * The spacing caps above stand in for a fair turn the lane cannot know: 100 lanes on 80/min are
 * 75 s apart, 5 lanes 4 s. A fleet view (AATB) knows the lane's fair fraction of the quota, and
 * with it the turn: the spacing at which this lane spends its fraction of the fleet's target.
 * At the end of an at-capacity run that is what lets a light lane's last request go when its
 * turn comes rather than a fixed minute or two after its previous send; in an overloaded
 * 100-client run it is the 75 s the fixed caps approximate.
 * Only on a quota that refills continuously (a sliding window included): a fixed window or a
 * stepped bucket gives units back in lumps, where the spacing is about reading the count again,
 * not about a turn. Not below MIN_FLEET_TURN_MS: a lane that sends more often reads its own rate
 * well, and its share reading is better than the fleet's (5-client runs, turns of ~4 s, without
 * the floor: 0 → 1.2–1.3 429s a run and 1.02 → 1.07 × the oracle's time; on a sliding-window
 * counter 0 → 9–22 429s).
 */
function fleetTurnMs(guidance: QuotaGuidance, cost: number, target: number, fleetShare: number): number {
  return Math.max(onWindow(guidance, MIN_FLEET_TURN_MS), (Math.max(cost, 1) * 1000) / (target * fleetShare))
}
const MIN_FLEET_TURN_MS = 10_000

/**
 * The horizon over which the fleet may spend what is left above the reserve (`above`), or must
 * win back what it is below it. On a sliding window what is left when the window ends is lost:
 * the window admits the quota less the count at its end, and that count carries into the next
 * window as `remaining` but fades back only as fast as this window was spent. So a sliding lane
 * spends down what is left by the window's end (the far reset less one window: a counter's reset
 * is the current window's end plus one window), and below the reserve it closes the gap faster,
 * since there is no bucket level to absorb the attempts others have in flight.
 */
function spendHorizonMs(guidance: QuotaGuidance, now: number, above: boolean): number {
  const windowMs = guidance.windowMs
  if (!guidance.sliding) return onWindow(guidance, SPEND_HORIZON_MS)
  if (!above) return onWindow(guidance, SLIDING_RECOVER_HORIZON_MS)
  if (guidance.farResetAt === undefined || windowMs === undefined) return onWindow(guidance, SPEND_HORIZON_MS)
  let endAt = guidance.farResetAt - windowMs
  if (endAt <= now) endAt += Math.ceil((now - endAt) / windowMs) * windowMs
  return Math.min(onWindow(guidance, SPEND_HORIZON_MS), Math.max(onWindow(guidance, MIN_SLIDING_HORIZON_MS), endAt - now))
}
/**
 * Measured (sliding-window counter, RateLimit headers, 30 seeds): a floor of 5 s instead of 10 s
 * changes little; the window's end as the horizon below the reserve too (down to the floor)
 * brings real-trace-800 to 4.7 429s but real-trace-400 to 1.17 × the oracle.
 */
const MIN_SLIDING_HORIZON_MS = 10_000
const SLIDING_RECOVER_HORIZON_MS = 20_000

/** Spacing bounds of the quota share: a new hint always comes within them. */
const MAX_SHARE_SPACING_MS = 60_000
const MAX_EMPTY_SHARE_SPACING_MS = 120_000
/**
 * The same bounds on a sliding window, a little shorter: there a unit nobody takes is rate lost
 * for good (a bucket banks it), and more lanes are marked sliding (by the window step), whose
 * light ones would otherwise wait out 120 s with a backlog. Still above the 75 s fair turn of
 * 100 lanes on 80/min. Measured (sliding-window counter, RateLimit headers, 30 seeds): with the
 * window step alone the 100-client runs keep 25–45% fewer 429s but take up to 0.02 × (AATB up to
 * 0.04 ×) more time; 50/100 s gives that time back; 50/90 s brings real-trace-800's 429s back.
 */
const MAX_SLIDING_SPACING_MS = 50_000
const MAX_EMPTY_SLIDING_SPACING_MS = 100_000

/** The fleet's spending and ours (units/s) over the sampled hints, or undefined when they span too little. */
function fleetSpending(guidance: QuotaGuidance, now: number): { perSecond: number; ownPerSecond: number } | undefined {
  const samples = guidance.samples
  const newest = samples[samples.length - 1]
  if (newest === undefined) return undefined
  // Samples are pruned to the window plus the one just before it: the oldest is the widest span.
  const oldest = samples[0] as Sample
  // Spans on a threshold are decided the same way at every scale (see DURATION_TIE_RATIO).
  if (shorterThan(newest[0] - oldest[0], onWindow(guidance, MIN_SAMPLE_SPAN_MS))) return undefined
  if (moreThanAgo(oldest[0], now, onWindow(guidance, MAX_SAMPLE_AGE_MS))) return undefined
  const spanS = (newest[0] - oldest[0]) / 1000
  const own = newest[2] - oldest[2]
  // A continuous quota refilled Q·Δt meanwhile. A stepped one refilled nothing unless the
  // count went up (a step landed): then the span says nothing and the lane waits for the next.
  let used: number
  // A span that began with a 429 whose Retry-After the server set: nothing came back before that
  // time. Read as refilled all along, the units a sliding-window counter gives back only as its
  // window rolls read as another lane's spending, and a lone lane waited out the 100 s empty-quota
  // spacing (one client's 300 calls, RateLimit headers: 1.35 × the oracle; now 1.03 ×). Only for a
  // lane that drained the quota itself: in a fleet the span says nothing of the others, and read
  // as "none" every lane of a hundred spent as if alone (the counter's 100-client runs: 2–5 × the
  // 429s).
  const refillS = guidance.ownDrain ? Math.max(0, newest[0] - Math.max(oldest[0], oldest[3])) / 1000 : spanS
  if (guidance.continuous) used = oldest[1] - newest[1] + (guidance.quotaPerSecond as number) * refillS
  else if (newest[1] <= oldest[1]) used = oldest[1] - newest[1]
  else return undefined
  // One unit of our own counts at least: a lane that is about to send is part of the fleet.
  const ownUnits = Math.max(own, 1)
  return { perSecond: Math.max(used, ownUnits) / spanS, ownPerSecond: ownUnits / spanS }
}
