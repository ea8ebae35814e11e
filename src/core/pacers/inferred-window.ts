// The window of a quota whose server never announces one. OpenAI, Anthropic and GitHub send a
// limit, what is left of it and when it resets, but no RateLimit-Policy: the lane has the quota
// and must find its time scale in what the server says from one response to the next, never
// assume it. Two ways a quota refills, told apart by how its reset moves as units are spent:
//
// - at a boundary (a fixed window, GitHub's hour from first use, a bucket refilled in steps):
//   the reset stays put while `remaining` falls. The window is then the distance between two
//   successive resets, read when the lane's hint of one has passed and an answer announces the
//   next: at most the window plus the time before the lane's first send of the new window (0
//   for a window aligned to the clock), so never shorter than the real one. The smallest such
//   distance seen is kept. Only a reset that brought the whole limit back counts (the answer's
//   `remaining` at least the limit less what the lane sent since its last hint): a bucket
//   refilled in steps brings a step at each reset, and the limit over its step would be a rate
//   it never gives. Such a bucket announces its time to full, which jumps a whole step further
//   when more than a step's units go missing: that jump is the step (the window), the units
//   that came back before the reset are what a step brings (the quota), and an empty lane waits
//   for the next step on that lattice (nextBoundaryAt), not for the reset.
// - continuously (a token bucket whose reset is the time until it is full: OpenAI's, Anthropic's
//   documented meaning): the reset moves on by each spent unit's refill time. The missing units
//   over the time to the reset are then the refill rate, and the limit over the rate the window.
// - as the window slides: a sliding log gives each unit back one window after it was spent, and
//   its reset (the newest entry's expiry) stays one window after each answer, whatever is missing:
//   a fixed window's would have come nearer, a bucket's moved on with the missing units. Told by
//   the reset keeping its distance while the time passed and the missing units grew beyond what
//   the headers' rounding can hide (noteExpiry); the distance is then the window. A sliding-window
//   counter's reset (its current window's end plus one window) jumps a whole window at each of
//   its windows' ends, as a bucket refilled in steps does, but its units fade back between them:
//   `remaining` rising with no boundary of the lattice between two answers tells it. Either is
//   then read as a window announced with the limit as its quota (atb-quota.ts), sticky for the limit.
//
// A pair of hints of one window (no reset passed between them, `remaining` fallen) decides: the
// observed move of the reset is nearer to 0 (a boundary) or to what a bucket refilling at the
// rate the first hint implies would show. Both tests and both estimates are ratios of the
// server's own times, so every time × k gives every window × k. Hints whose limit is missing,
// not positive, below `remaining` or changed since the last hint are no evidence (a changed
// limit is another quota: what was learned of the old one is dropped).

/** One response's word on the quota, on the client's clock. */
export interface QuotaHint {
  at: number
  remaining: number
  limit: number
  resetAt: number
}

export type RefillModel = 'boundary' | 'continuous' | 'expiry' | 'fading'

/** What the lane has learned of a quota's window from its hints. */
export interface WindowEvidence {
  /** The latest usable hint. */
  last?: QuotaHint
  /** How the quota refills, once a pair of hints of one window told. */
  model?: RefillModel
  /** The window inferred (ms); undefined until the evidence gives one. */
  windowMs?: number
  /**
   * Units a step brought, when `remaining` rose before the announced reset (a bucket refilled in
   * steps, whose reset is its time to full): the most seen, each a lower bound (others may have
   * spent some of the step before the lane's next answer). The quota per window is then this
   * step's units, not the limit, which only a full bucket holds.
   */
  stepUnits?: number
  /** Whether the reset was seen to jump a whole step (a bucket refilled in steps). */
  stepped?: boolean
  /** The smallest such jump: the step (a window read under another model since may differ). */
  stepMs?: number
  /** The hint the expiry test compares later ones with (noteExpiry). */
  anchor?: QuotaHint
  /** Whether the reset jumped (moved on by more than the time passed) since the anchor. */
  jumped?: boolean
  /** A sliding window, once told (sticky for the limit): a log's units come back as they expire, a counter's fade back. */
  sliding?: 'expiry' | 'fading'
}

/** Take in one hint; returns the quota and window the evidence now gives, if any. */
export function inferWindow(
  evidence: WindowEvidence,
  at: number,
  remaining: number,
  limit: number | undefined,
  resetAt: number | undefined,
  /** Units the lane sent since its last hint (all of them may have been counted in the new window). */
  sentSinceLast = 0,
  /** Whether this answer refused its attempt (a 429 or 503). */
  refused = false,
): { quota: number; windowMs: number; model: RefillModel } | undefined {
  if (limit === undefined || !(limit > 0) || !Number.isFinite(limit) || remaining > limit || resetAt === undefined || !(resetAt > at)) {
    return current(evidence)
  }
  const hint: QuotaHint = { at, remaining, limit, resetAt }
  const last = evidence.last
  if (last !== undefined && last.limit !== limit) {
    evidence.model = undefined
    evidence.windowMs = undefined
    evidence.stepUnits = undefined
    evidence.stepped = undefined
    evidence.stepMs = undefined
    evidence.anchor = undefined
    evidence.jumped = undefined
    evidence.sliding = undefined
  }
  if (evidence.sliding === undefined && noteExpiry(evidence, hint)) {
    evidence.sliding = 'expiry'
    evidence.windowMs = (evidence.anchor as QuotaHint).resetAt - (evidence.anchor as QuotaHint).at
  } else if (evidence.sliding === undefined && fullBeyondStep(evidence, hint)) {
    evidence.sliding = 'fading'
  }
  if (evidence.sliding !== undefined) {
    // A log's reset is its newest entry's expiry: at most a window away (the rounding's second
    // above it), the largest distance seen. A counter keeps the window its boundaries jumped by.
    if (evidence.sliding === 'expiry') evidence.windowMs = Math.max(evidence.windowMs ?? 0, resetAt - at)
    evidence.model = evidence.sliding
  } else if (last !== undefined && last.limit === limit && last.at <= at) {
    if (last.resetAt <= at) {
      // The last reset has passed and this answer announces the next one.
      if (evidence.model === 'boundary' && resetAt > last.resetAt && remaining + sentSinceLast >= limit) {
        evidence.windowMs = Math.min(evidence.windowMs ?? Infinity, resetAt - last.resetAt)
      }
    } else if (remaining < last.remaining && last.remaining < limit) {
      evidence.model = refillModel(last, hint)
      if (evidence.model === 'continuous') evidence.windowMs = undefined
      if (stepJump(last, hint)) {
        // A stepped bucket's time to full jumped a step further: the reset moves by whole steps,
        // and the smallest such move is the step (a window read before, under another model or
        // from a full refill, measured something else).
        const moved = resetAt - last.resetAt
        evidence.windowMs = evidence.stepped ? Math.min(evidence.windowMs ?? Infinity, moved) : moved
        evidence.stepMs = Math.min(evidence.stepMs ?? Infinity, moved)
        evidence.stepped = true
      }
    } else if (evidence.stepped && evidence.model === 'boundary' && remaining + sentSinceLast > last.remaining) {
      if (!refused && evidence.stepMs !== undefined && withinOneStep(last.at, at, resetAt, evidence.stepMs)) {
        // Units came back between two boundaries: they fade back, as a sliding-window counter's
        // do. Not read from a refusal: its attempt, counted among the lane's sends, took nothing.
        evidence.sliding = 'fading'
        evidence.model = 'fading'
      } else {
        // Units came back before the announced reset: a step.
        evidence.stepUnits = Math.max(evidence.stepUnits ?? 0, remaining + sentSinceLast - last.remaining)
      }
    }
  }
  if (evidence.model === 'continuous' && remaining < limit) {
    // The missing units came back at the rate they take to the reset: the window is the limit's worth.
    evidence.windowMs = (limit * (resetAt - at)) / (limit - remaining)
  }
  evidence.last = hint
  return current(evidence)
}

/**
 * Whether a quota read as refilled in steps announces its time to full beyond the next step while
 * no more units are missing than a step brings (at least the most seen come back at one): a bucket
 * refilled in steps would be full at that step. A sliding-window counter announces its full
 * refill a whole window after its current window ends, whatever is missing, and its units fade
 * back in between: a fleet held until each boundary never sees them come, and spent about half
 * the quota a window (1.6 × the oracle). Within the rounding of the reset and of the step read
 * from two resets, a second each.
 */
function fullBeyondStep(evidence: WindowEvidence, hint: QuotaHint): boolean {
  const { stepMs, stepUnits } = evidence
  if (evidence.model !== 'boundary' || stepMs === undefined || stepUnits === undefined) return false
  return hint.limit - hint.remaining <= stepUnits && hint.resetAt - hint.at > stepMs + 2 * RESET_RESOLUTION_MS
}

/**
 * Whether no boundary of the lattice that ends at `resetAt`, `windowMs` apart, falls between `fromAt`
 * and `toAt`, nor within the headers' rounding of either (a whole second on the reset).
 */
function withinOneStep(fromAt: number, toAt: number, resetAt: number, windowMs: number): boolean {
  const stepOf = (at: number): number => Math.floor((resetAt - at) / windowMs)
  return stepOf(fromAt - RESET_RESOLUTION_MS) === stepOf(toAt + RESET_RESOLUTION_MS)
}

/** Whether a lane reads this inferred model as it reads an announced window: a sliding window, once told (sticky). */
export function readsAsAnnounced(model: RefillModel): boolean {
  return model === 'expiry' || model === 'fading'
}

function current(evidence: WindowEvidence): { quota: number; windowMs: number; model: RefillModel } | undefined {
  const { last, model, windowMs } = evidence
  if (last === undefined || model === undefined || windowMs === undefined || !(windowMs > 0) || !Number.isFinite(windowMs)) return undefined
  return { quota: model === 'boundary' && evidence.stepped === true && evidence.stepUnits !== undefined ? Math.min(last.limit, evidence.stepUnits) : last.limit, windowMs, model }
}

/**
 * Two hints of one window, `remaining` fallen between them: did the reset stay put, or move as a
 * bucket refilling at the first hint's implied rate ((limit − remaining) / time to its reset) would?
 */
function refillModel(first: QuotaHint, second: QuotaHint): RefillModel {
  const moved = second.resetAt - first.resetAt
  const perUnitMs = (first.resetAt - first.at) / (first.limit - first.remaining)
  const bucketMove = second.at - first.at + (first.remaining - second.remaining) * perUnitMs
  // A bucket refilled in steps keeps its reset put, or moves it on by a whole step once more than
  // one step's units are missing (its time to full is then a step further): a jump beyond what a
  // bucket's refill explains (within the headers' rounding) is a boundary's, however large.
  if (stepJump(first, second)) return 'boundary'
  return Math.abs(moved) < Math.abs(moved - bucketMove) ? 'boundary' : 'continuous'
}

/**
 * Whether the reset moved on between two hints of one window by more than a bucket refilling at
 * the first hint's implied rate would move it, by more than the headers' rounding (a whole second
 * on each reset, a whole unit on each count): a stepped bucket's time to full jumping a step. A
 * sliding log's reset (its newest entry's expiry) moves by at most the time between the hints.
 */
function stepJump(first: QuotaHint, second: QuotaHint): boolean {
  const perUnitMs = (first.resetAt - first.at) / (first.limit - first.remaining)
  const bucketMove = second.at - first.at + (first.remaining - second.remaining) * perUnitMs
  return second.resetAt - first.resetAt > bucketMove + 2 * (RESET_RESOLUTION_MS + perUnitMs)
}

/**
 * Whether this hint and the lane's anchor tell a quota whose units come back as they expire (a
 * sliding log): the reset kept its distance from the answer (within the headers' second) while
 * enough time passed that a fixed window's reset would have come a rounding nearer, and the
 * missing units at least doubled, which would have moved a bucket's time to full on by at least
 * the distance itself. A distance of a few seconds at least (below that every model reads alike
 * through the rounding), and within half of it. And the reset came there gradually: between no two
 * of the lane's hints since the anchor did it move on by more than the time between them (within
 * the rounding). A reset that jumps (a sliding-window counter's at its window's end, a stepped bucket's at a step)
 * lands at the same distance when the time passed equals its jump: one client on a counter of 100
 * per 15 s read it as a log with a 30 s window (300 calls 57 s; read as a counter, 51 s). The
 * anchor is the hint with the fewest units missing (at least one) within that half; a hint past
 * it, or with fewer missing, takes its place.
 */
function noteExpiry(evidence: WindowEvidence, hint: QuotaHint): boolean {
  const anchor = evidence.anchor
  const missing = hint.limit - hint.remaining
  if (anchor !== undefined && anchor.at <= hint.at && anchor.resetAt > hint.at) {
    const distanceMs = anchor.resetAt - anchor.at
    const elapsedMs = hint.at - anchor.at
    if (elapsedMs <= distanceMs / 2) {
      const last = evidence.last
      if (last !== undefined && last.at >= anchor.at && hint.resetAt - last.resetAt > hint.at - last.at + 2 * RESET_RESOLUTION_MS) evidence.jumped = true
      if (
        !evidence.jumped &&
        distanceMs >= 3 * RESET_RESOLUTION_MS &&
        elapsedMs >= 2 * RESET_RESOLUTION_MS &&
        missing >= 2 * (anchor.limit - anchor.remaining) &&
        Math.abs(hint.resetAt - hint.at - distanceMs) < RESET_RESOLUTION_MS
      ) {
        return true
      }
      if (missing >= anchor.limit - anchor.remaining || missing < 1) return false
    }
  }
  if (missing >= 1) {
    evidence.anchor = hint
    evidence.jumped = false
  }
  return false
}

/** A reset's resolution: whole seconds (X-RateLimit-Reset, RateLimit's t). */
const RESET_RESOLUTION_MS = 1_000

/**
 * When the units a boundary quota's hint had spent come back. A fixed window's reset is never
 * more than one window away, and brings them. A bucket refilled in steps announces its time to
 * full, which is several steps away once more than one step's units are missing (Envoy's 80 every
 * 60 s with 100 missing: 120 s), while its next step comes within one window. The boundaries lie
 * one inferred window apart, ending at the reset: the first after the hint (`hintAt`) is the one
 * that brings units back. Waiting for the reset skipped a step every time the quota ran dry
 * (X-RateLimit headers, stepped bucket: 1.30 × the oracle). Without a window, the reset.
 */
export function nextBoundaryAt(resetAt: number, windowMs: number | undefined, hintAt: number): number {
  if (windowMs === undefined || !(windowMs > 0) || !Number.isFinite(windowMs) || resetAt - hintAt <= windowMs) return resetAt
  return resetAt - Math.floor((resetAt - hintAt) / windowMs) * windowMs
}
