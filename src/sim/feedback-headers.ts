// Renders an Admission the way real servers answer, per feedback mode. The simulator
// calls this for every attempt, so it builds only the pairs it returns.
//
// - status-only: nothing (the paper's Envoy set-up: a bare 429).
// - retry-after: `Retry-After` on refusals only, whole delta-seconds rounded UP
//   (RFC 9110 §10.2.3 has no fractions; rounding down would invite a refused retry).
// - retry-after-ms: the same `Retry-After` plus `retry-after-ms`, the wait in whole milliseconds
//   rounded up, as OpenAI's and Anthropic's APIs send them side by side.
// - ratelimit: IETF draft-ietf-httpapi-ratelimit-headers-10 on EVERY response:
//   `RateLimit-Policy: "<name>";q=<quota>;w=<window s>` and `RateLimit: "<name>";r=<remaining>;t=<s>`,
//   plus `Retry-After` on refusals, as draft servers do (the draft lets it take precedence over `t`).
// - x-ratelimit: GitHub's `X-RateLimit-Limit/-Remaining/-Reset` (reset in epoch seconds) on
//   every response, with the `Date` it was computed against (clients resolve epoch vs delta
//   and clock skew with it), plus `Retry-After` on refusals.
import type { Admission, Feedback } from './types.js'

export type HeaderPairs = Array<[string, string]>

/**
 * @param nowMs epoch ms of the response, used only by `x-ratelimit` (its reset is absolute).
 *   The simulator passes its virtual clock, the quota server its wall clock.
 */
export function feedbackHeaders(admission: Admission, feedback: Feedback, nowMs = 0): HeaderPairs {
  switch (feedback) {
    case 'retry-after':
      return admission.admitted ? [] : withRetryAfter([], admission)
    case 'retry-after-ms':
      return admission.admitted ? [] : withRetryAfter([], admission, true)
    case 'ratelimit': {
      const name = sfString(admission.policy)
      return withRetryAfter(
        [
          ['RateLimit-Policy', `${name};q=${wholeUnits(admission.limit)};w=${windowSeconds(admission.windowMs)}`],
          ['RateLimit', `${name};r=${wholeUnits(admission.remaining)};t=${ceilSeconds(admission.resetMs)}`],
        ],
        admission,
      )
    }
    case 'x-ratelimit':
      return withRetryAfter(
        [
          ['X-RateLimit-Limit', String(wholeUnits(admission.limit))],
          ['X-RateLimit-Remaining', String(wholeUnits(admission.remaining))],
          ['X-RateLimit-Reset', String(Math.ceil((nowMs + Math.max(0, admission.resetMs)) / 1000))],
          ['Date', httpDate(nowMs)],
        ],
        admission,
      )
    default:
      return []
  }
}

function withRetryAfter(pairs: HeaderPairs, admission: Admission, inMs = false): HeaderPairs {
  const waitMs = admission.retryAfterMs
  // An impossible request (cost above the limit) has no honest Retry-After: send none.
  if (!admission.admitted && waitMs !== undefined && Number.isFinite(waitMs)) {
    pairs.push(['Retry-After', String(ceilSeconds(waitMs))])
    if (inMs) pairs.push(['retry-after-ms', String(waitMs > 0 ? Math.ceil(waitMs - 1e-9) : 0)])
  }
  return pairs
}

function ceilSeconds(ms: number): number {
  return ms > 0 && Number.isFinite(ms) ? Math.ceil(ms / 1000 - 1e-9) : 0
}

function windowSeconds(ms: number): number {
  return Number.isFinite(ms) ? Math.max(1, Math.round(ms / 1000)) : 1
}

function wholeUnits(units: number): number {
  return units > 0 && Number.isFinite(units) ? Math.floor(units + 1e-9) : 0
}

/** Structured-field string (RFC 9651 §3.3.3): quoted, with `\` and `"` escaped. */
function sfString(value: string): string {
  return /["\\]/.test(value) ? `"${value.replace(/["\\]/g, '\\$&')}"` : `"${value}"`
}

// IMF-fixdate changes once a second; responses within the same second share the string.
let cachedSecond = Number.NaN
let cachedDate = ''
function httpDate(nowMs: number): string {
  const second = Math.floor(nowMs / 1000)
  if (second !== cachedSecond) {
    cachedSecond = second
    cachedDate = new Date(second * 1000).toUTCString()
  }
  return cachedDate
}
