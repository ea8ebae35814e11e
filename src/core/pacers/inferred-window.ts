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

export type RefillModel = 'boundary' | 'continuous'

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
  } else if (last !== undefined && last.at <= at) {
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
        evidence.stepped = true
      }
    } else if (evidence.stepped && evidence.model === 'boundary' && remaining + sentSinceLast > last.remaining) {
      // Units came back before the announced reset: a step.
      evidence.stepUnits = Math.max(evidence.stepUnits ?? 0, remaining + sentSinceLast - last.remaining)
    }
  }
  if (evidence.model === 'continuous' && remaining < limit) {
    // The missing units came back at the rate they take to the reset: the window is the limit's worth.
    evidence.windowMs = (limit * (resetAt - at)) / (limit - remaining)
  }
  evidence.last = hint
  return current(evidence)
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
