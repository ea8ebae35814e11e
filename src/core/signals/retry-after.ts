// When the server asked us to try again, from whichever retry header it sent.
// First valid one wins, in this order:
//   retry-after-ms           milliseconds (OpenAI and Stainless SDKs); more precise than Retry-After
//   x-amz-retry-after        milliseconds (AWS)
//   Retry-After              delay-seconds or HTTP-date (RFC 9110 §10.2.3); fractions tolerated
//   X-RateLimit-Retry-After  seconds, or an epoch by magnitude (Symfony-based APIs, MailerLite)
//   X-Retry-In               Go duration ("30s"; Traefik/oxy)
// The ms forms come first because servers send them alongside a rounded-up
// Retry-After for the same instruction. A malformed value falls through to the next.
import { parseDurationMs } from './duration.js'
import { readField, type HeaderSource } from './header-source.js'
import { parseHttpDate } from './http-date.js'
import { firstMember, parseCount, parseNonNegativeDecimal } from './parse-number.js'
import type { TimeBase } from './reset-time.js'

export const RETRY_SENTINELS = [
  'retry-after-ms',
  'x-amz-retry-after',
  'retry-after',
  'x-ratelimit-retry-after',
  'x-retry-in',
] as const

/** How each field's value becomes an epoch ms on our clock (undefined: malformed, try the next). */
const READERS: Array<[field: (typeof RETRY_SENTINELS)[number], read: (value: string, time: TimeBase) => number | undefined]> = [
  ['retry-after-ms', (value, time) => ifDefined(parseCount(value), (ms) => time.afterDelay(ms))],
  ['x-amz-retry-after', (value, time) => ifDefined(parseCount(value), (ms) => time.afterDelay(ms))],
  ['retry-after', parseRetryAfter],
  ['x-ratelimit-retry-after', (value, time) => ifDefined(parseCount(value), (reset) => time.atReset(reset))],
  ['x-retry-in', (value, time) => ifDefined(parseDurationMs(value), (ms) => time.afterDelay(ms))],
]
/**
 * The fields that count milliseconds. A Retry-After with a fraction says milliseconds too; the rest
 * (an HTTP-date, an epoch, a Go duration in X-Retry-In) are taken as whole seconds.
 */
const MILLISECOND_FIELDS: ReadonlySet<string> = new Set(['retry-after-ms', 'x-amz-retry-after'])

/** The resolution (ms) a field's value was given in: 1 ms, or whole seconds. */
function resolutionOf(field: string, value: string): number {
  return MILLISECOND_FIELDS.has(field) || (field === 'retry-after' && /^\s*\d+\.\d/.test(value)) ? 1 : 1000
}

/** When to try again, and the resolution (ms) the server said it in. */
export interface RetryTime {
  at: number
  resolutionMs: number
}

function ifDefined<T>(value: T | undefined, then: (value: T) => number | undefined): number | undefined {
  return value === undefined ? undefined : then(value)
}

/**
 * Epoch ms (on our clock, >= now) before which not to send again, with the resolution it was said
 * in (1 ms for the millisecond fields and a fractional Retry-After, else 1 s); undefined when no
 * valid retry header.
 */
export function readRetryAt(headers: HeaderSource, time: TimeBase): RetryTime | undefined {
  for (const [field, read] of READERS) {
    const value = readField(headers, field)
    const at = value === undefined ? undefined : read(value, time)
    if (at !== undefined) return { at, resolutionMs: resolutionOf(field, value as string) }
  }
  return undefined
}

const IMF_FIXDATE_LENGTH = 29

/**
 * A Retry-After value: delay-seconds (a decimal fraction tolerated, as AWS and the
 * Stainless SDKs do) or an HTTP-date, corrected for the server's clock through its
 * `Date`. A field a proxy duplicated ("120, 120", or two IMF-fixdates) reads its
 * first member. A negative or absurd value is undefined; a past date is `now`.
 */
export function parseRetryAfter(value: string, time: TimeBase): number | undefined {
  const text = value.trim()
  const seconds = parseNonNegativeDecimal(text)
  if (seconds !== undefined) return time.afterDelay(seconds * 1000)
  const date = parseHttpDate(text, time.now)
  if (date !== undefined) return time.atMoment(date)

  if (text.length > IMF_FIXDATE_LENGTH && text.charCodeAt(IMF_FIXDATE_LENGTH) === 44 /* , */) {
    const firstDate = parseHttpDate(text.slice(0, IMF_FIXDATE_LENGTH), time.now)
    if (firstDate !== undefined) return time.atMoment(firstDate)
  }
  const firstSeconds = parseNonNegativeDecimal(firstMember(text))
  return firstSeconds === undefined ? undefined : time.afterDelay(firstSeconds * 1000)
}
