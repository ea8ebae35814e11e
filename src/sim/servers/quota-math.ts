// Small shared arithmetic for the server models. Kept apart so every model maps the
// paper's quota (a bucket of `capacity` refilled at `perMinute`) onto its own terms
// the same way, and so the floating-point guards live in one place.
import type { QuotaConfig } from '../types.js'

/**
 * Tolerance on quota units. Refill arithmetic such as `750 * (80 / 60000)` lands on
 * 0.9999999999999999 instead of 1: without it, a request offered exactly when the
 * bucket should hold one token would be refused.
 */
export const EPSILON = 1e-9

/** Name every model uses for its own limit unless told otherwise (`RateLimit-Policy` item name). */
export const DEFAULT_POLICY = 'global'

/**
 * The window that carries the quota's long-run rate with `capacity` as its quota:
 * `capacity` units per `capacity / perMinute` minutes (100 per 75 s for the paper's 100 / 80 per min).
 * Window-based models use it as their window so they admit the same long-run rate and the same burst.
 */
export function quotaWindowMs(quota: Pick<QuotaConfig, 'capacity' | 'perMinute'>): number {
  return (quota.capacity * 60_000) / quota.perMinute
}

/** Configuration errors are caught at construction, never per request. */
export function assertPositive(name: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be a positive finite number, got ${value}`)
}

/**
 * Moves a computed admission time forward by the smallest amounts until `admits(t)`
 * holds. Closed-form times such as `createdAt + k * stepMs` can round a hair below the
 * true boundary (or, with epoch-sized `now`, lose sub-ulp precision); the oracle and
 * Retry-After rely on `admit(nextAdmitAt(now))` succeeding, so we settle on a time that does.
 */
export function settle(t: number, admits: (t: number) => boolean, notBefore: number): number {
  // Prefer the nanosecond-grid neighbour (1000 rather than 999.9999999999998) when it
  // admits too: same instant for every purpose, and stable figures in tests and headers.
  const snapped = Math.round(t * 1e6) / 1e6
  if (snapped !== t && snapped >= notBefore && admits(snapped)) return snapped
  let step = Math.max(Math.abs(t) * Number.EPSILON, 2 ** -40)
  for (let i = 0; i < 80 && !admits(t); i++) {
    t += step
    step *= 2
  }
  return t
}

/** Remaining units as servers print them: whole, never negative. */
export function wholeRemaining(units: number): number {
  return units <= 0 ? 0 : Math.floor(units + EPSILON)
}
