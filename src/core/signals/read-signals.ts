// The one entry point: a response's status and headers → the typed Signal the
// pacers consume. Pure (the caller passes `now`), total (never throws, never
// yields NaN, a past moment or an infinite one), and cheap when the response
// carries no rate-limit header at all, which is almost every response.
import type { Signal, SignalKind } from '../types.js'
import type { HeaderSource } from './header-source.js'
import { readIetfRateLimit } from './ratelimit-ietf.js'
import { readLlmRateLimit } from './llm-ratelimit.js'
import type { Observations } from './limit-observation.js'
import { distinctPolicies, mostRestrictive } from './most-restrictive.js'
import { TimeBase } from './reset-time.js'
import { readRetryAt } from './retry-after.js'
import { readShouldRetry } from './should-retry.js'
import { signalFields } from './signal-fields.js'
import { readXRateLimit } from './x-ratelimit.js'

export type { HeaderSource }
export { SIGNAL_HEADER_NAMES } from './signal-fields.js'

/**
 * Read what a response says about the quota.
 *
 * @param status HTTP status; 0 (or anything that is not an HTTP status) when there was no response.
 * @param headers The response headers (a `Headers`, or anything with a case-insensitive `get`).
 * @param now Epoch ms of the client when the response arrived.
 */
export function readSignals(status: number, headers: HeaderSource, now: number): Signal {
  const code = Number.isInteger(status) && status >= 100 && status <= 999 ? status : 0
  try {
    const fields = code === 0 ? undefined : signalFields(headers)
    if (fields === undefined) return { kind: baseKind(code), status: code }
    return readSlow(code, fields, now)
  } catch {
    // A HeaderSource whose get() throws: nothing it says can be trusted.
    return { kind: baseKind(code), status: code }
  }
}

/**
 * The status alone: 0 → error, 429 → throttled, 503 and 529 → overloaded, anything else → ok.
 * 529 is Anthropic's `overloaded_error` (also sent by some load balancers for the same
 * condition): the server did not process the request, as with a 503.
 */
function baseKind(status: number): SignalKind {
  if (status === 0) return 'error'
  if (status === 429) return 'throttled'
  if (status === 503 || status === 529) return 'overloaded'
  return 'ok'
}

function readSlow(status: number, headers: HeaderSource, now: number): Signal {
  const time = new TimeBase(now, headers)
  const observations: Observations = { limits: [], policies: [] }
  readIetfRateLimit(headers, time, observations)
  readXRateLimit(headers, time, observations)
  readLlmRateLimit(headers, time, observations)
  const chosen = mostRestrictive(observations.limits)
  const told = readRetryAt(headers, time)
  let retryAt = told?.at

  let kind = baseKind(status)
  // GitHub's secondary limits (and some gateways) answer 403 when the quota is
  // spent; without the exhaustion evidence a 403 is an ordinary refusal.
  if (status === 403 && (retryAt !== undefined || chosen?.remaining === 0)) kind = 'throttled'

  if (kind === 'ok' || kind === 'error') {
    // Retry-After on a 2xx/3xx/other 4xx is about that resource (a 202's polling
    // interval, a redirect's delay), not about the quota: it must not gate the lane.
    retryAt = undefined
  } else if (retryAt === undefined && kind === 'throttled' && chosen?.remaining === 0) {
    retryAt = chosen.resetAt
  }

  const signal: Signal = { kind, status }
  if (retryAt !== undefined) signal.retryAt = retryAt
  // Only a server's own millisecond field says more than whole seconds (a fallback to the
  // RateLimit reset is whole seconds too).
  if (retryAt !== undefined && told !== undefined && retryAt === told.at && told.resolutionMs < 1000) signal.retryResolutionMs = told.resolutionMs
  // On a success the server's word on retrying means nothing: there is nothing to retry.
  const shouldRetry = status >= 400 ? readShouldRetry(headers) : undefined
  if (shouldRetry !== undefined) signal.shouldRetry = shouldRetry
  if (chosen !== undefined) {
    signal.remaining = chosen.remaining
    if (chosen.resetAt !== undefined) signal.resetAt = chosen.resetAt
    if (chosen.limit !== undefined) signal.limit = chosen.limit
    if (chosen.named) signal.policy = chosen.name
  }
  if (observations.policies.length > 0) signal.policies = distinctPolicies(observations.policies)
  return signal
}

