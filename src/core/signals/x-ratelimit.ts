// The de-facto `X-RateLimit-*` family, which shares names but not meanings:
//   GitHub   x-ratelimit-{limit,remaining,used,reset,resource}; reset = epoch seconds
//   Discord  X-RateLimit-{Limit,Remaining,Reset,Reset-After,Bucket}; Reset = epoch
//            seconds with decimals, Reset-After = delay seconds (float)
//   Zalando  X-RateLimit-{Limit,Remaining,Reset}; Reset = delay seconds
//   Twitter  x-rate-limit-{limit,remaining,reset}; reset = epoch seconds
// The reset's unit is resolved by magnitude (reset-time.ts); Discord's
// Reset-After is preferred over its Reset because a delay needs no clock.
import { readField, type HeaderSource } from './header-source.js'
import { parseHttpDate } from './http-date.js'
import { DEFAULT_POLICY, REQUESTS_UNIT, type Observations } from './limit-observation.js'
import { parseCount } from './parse-number.js'
import type { TimeBase } from './reset-time.js'

/** A dialect is read only when its `remaining` is present: every server sends it with the others. */
export const X_RATELIMIT_SENTINELS = ['x-ratelimit-remaining', 'x-rate-limit-remaining'] as const

export function readXRateLimit(headers: HeaderSource, time: TimeBase, out: Observations): void {
  const remaining = parseCount(readField(headers, 'x-ratelimit-remaining'))
  if (remaining !== undefined) {
    const name = nameOf(readField(headers, 'x-ratelimit-resource') ?? readField(headers, 'x-ratelimit-bucket'))
    const resetAfter = parseCount(readField(headers, 'x-ratelimit-reset-after'))
    const resetAt =
      resetAfter === undefined ? resetOf(readField(headers, 'x-ratelimit-reset'), time) : time.afterDelay(resetAfter * 1000)
    push(out, name, remaining, parseCount(readField(headers, 'x-ratelimit-limit')), resetAt)
  }

  const twitterRemaining = parseCount(readField(headers, 'x-rate-limit-remaining'))
  if (twitterRemaining !== undefined) {
    const limit = parseCount(readField(headers, 'x-rate-limit-limit'))
    push(out, undefined, twitterRemaining, limit, resetOf(readField(headers, 'x-rate-limit-reset'), time))
  }
}

function push(
  out: Observations,
  name: string | undefined,
  remaining: number,
  limit: number | undefined,
  resetAt: number | undefined,
): void {
  const policyName = name ?? DEFAULT_POLICY
  out.limits.push({ name: policyName, named: name !== undefined, unit: REQUESTS_UNIT, remaining, limit, resetAt })
  if (limit !== undefined) out.policies.push({ name: policyName, quota: limit, unit: REQUESTS_UNIT })
}

/**
 * A number (epoch or delay, by magnitude), or failing that an HTTP-date, which a
 * few servers put here. Other text (e.g. a JavaScript `Date.toString()`) is ignored.
 */
export function resetOf(field: string | undefined, time: TimeBase): number | undefined {
  if (field === undefined) return undefined
  const seconds = parseCount(field)
  if (seconds !== undefined) return time.atReset(seconds)
  const date = parseHttpDate(field, time.now)
  return date === undefined ? undefined : time.atMoment(date)
}

function nameOf(field: string | undefined): string | undefined {
  const name = field?.trim()
  return name === undefined || name === '' ? undefined : name
}
