// Fixed window counter (GitHub-style quotas, express-rate-limit's default store).
//
// Mapping of QuotaConfig: `limit = capacity` units per window of
// `capacity / perMinute` minutes (100 per 75 s for 100 / 80 per min), windows aligned
// to the model's creation. Same long-run rate and the same burst as the token bucket;
// unlike it, up to 2 × limit can pass around a window boundary, and a client that
// waits gets nothing back until the window ends.
import type { Admission, ServerModel } from '../types.js'
import { DEFAULT_POLICY, EPSILON, assertPositive, settle, wholeRemaining } from './quota-math.js'

export interface FixedWindowOptions {
  /** Units admitted per window. */
  limit: number
  windowMs: number
  /** Creation time in ms; windows start at `now + k * windowMs`. Default 0. */
  now?: number
  policy?: string
}

export function fixedWindow(options: FixedWindowOptions): ServerModel {
  const { limit, windowMs } = options
  assertPositive('limit', limit)
  assertPositive('windowMs', windowMs)
  const createdAt = options.now ?? 0
  const policy = options.policy ?? DEFAULT_POLICY
  let window = 0
  let used = 0

  const windowAt = (now: number): number => Math.max(window, Math.floor((now - createdAt) / windowMs))
  const usedAt = (now: number): number => (windowAt(now) === window ? used : 0)
  const windowEnd = (now: number): number => createdAt + (windowAt(now) + 1) * windowMs

  const nextAdmitAt = (now: number, cost: number): number => {
    if (cost > limit + EPSILON) return Infinity
    if (usedAt(now) + cost <= limit + EPSILON) return now
    return settle(windowEnd(now), (t) => usedAt(t) + cost <= limit + EPSILON, now)
  }

  return {
    name: 'fixed-window',
    admit(now: number, cost: number): Admission {
      used = usedAt(now)
      window = windowAt(now)
      const admitted = used + cost <= limit + EPSILON
      if (admitted) used += cost
      const admission: Admission = {
        admitted,
        remaining: wholeRemaining(limit - used),
        limit,
        resetMs: windowEnd(now) - now,
        windowMs,
        policy,
      }
      if (!admitted) admission.retryAfterMs = nextAdmitAt(now, cost) - now
      return admission
    },
    nextAdmitAt,
  }
}
