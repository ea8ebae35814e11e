// Whether a quota comes back in lumps, read off a 429's Retry-After against the lane's own pace.
//
// A stepped bucket (Envoy's local rate limit: 80 units every minute) or a window answers a 429
// with the time to its next step or boundary; a continuously refilled quota with the time one
// unit takes to refill. Both are given durations, and neither says which kind of quota it is.
// What tells them apart is the lane's own pace: a lane paced at its share of a continuous quota
// Q sends no more often than one unit's refill, 1 / Q (its spacing is N / Q with N lanes), so
// the server's wait is never longer than the lane's spacing. When the wait outlasts the spacing
// the lane has just been cut to, the server holds the lane longer than its own pace would: the
// quota gives nothing back until the next lump, and the Retry-After gate, not the pacing, decides
// when the lane sends next. Both sides are times of the same quota, so every time × k gives the
// same verdict.
//
// The header counts whole seconds (RFC 9110 delta-seconds, rounded up by servers), so a wait of
// W seconds may be as short as W − 1: that lower bound is what is compared. A continuous quota
// faster than one unit a second answers "1" and never reads as lumpy.

/** Retry-After's resolution: whole seconds (RFC 9110 §10.2.3); the wait's lower bound is W − this. */
export const RETRY_AFTER_RESOLUTION_MS = 1_000

/**
 * Whether a 429 that makes the lane wait `waitMs` (retryAt − now) shows a lumpy quota, for a lane
 * whose pacing has just been set to `ratePerSecond`.
 */
export function waitOutlastsSpacing(waitMs: number, ratePerSecond: number): boolean {
  if (!(waitMs > 0) || !Number.isFinite(waitMs) || !(ratePerSecond > 0)) return false
  return waitMs - RETRY_AFTER_RESOLUTION_MS > 1000 / ratePerSecond
}
