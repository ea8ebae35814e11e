// Sliding window counter, Cloudflare's approximation of a sliding log with two
// counters: estimate = previous window's count × (share of the previous window still
// inside the trailing window) + current window's count. Rejected requests are not
// counted, so a client hammering a closed quota does not push its own reopening out.
//
// Mapping of QuotaConfig: `limit = capacity` units per window of
// `capacity / perMinute` minutes (100 per 75 s for 100 / 80 per min), windows aligned
// to the model's creation: same long-run rate and burst as the token bucket.
import type { Admission, ServerModel } from '../types.js'
import { DEFAULT_POLICY, EPSILON, assertPositive, settle, wholeRemaining } from './quota-math.js'

export interface SlidingWindowCounterOptions {
  limit: number
  windowMs: number
  /** Creation time in ms; windows start at `now + k * windowMs`. Default 0. */
  now?: number
  policy?: string
}

interface Counters {
  window: number
  previous: number
  current: number
}

export function slidingWindowCounter(options: SlidingWindowCounterOptions): ServerModel {
  const { limit, windowMs } = options
  assertPositive('limit', limit)
  assertPositive('windowMs', windowMs)
  const createdAt = options.now ?? 0
  const policy = options.policy ?? DEFAULT_POLICY
  const state: Counters = { window: 0, previous: 0, current: 0 }

  const windowStart = (window: number): number => createdAt + window * windowMs

  // Pure: the counters as they would stand at `now`.
  const countersAt = (now: number): Counters => {
    const window = Math.max(state.window, Math.floor((now - createdAt) / windowMs))
    if (window === state.window) return state
    if (window === state.window + 1) return { window, previous: state.current, current: 0 }
    return { window, previous: 0, current: 0 }
  }

  const estimate = (c: Counters, now: number): number => {
    const elapsed = Math.min(windowMs, Math.max(0, now - windowStart(c.window)))
    return (c.previous * (windowMs - elapsed)) / windowMs + c.current
  }

  const fits = (now: number, cost: number): boolean => estimate(countersAt(now), now) + cost <= limit + EPSILON

  const nextAdmitAt = (now: number, cost: number): number => {
    if (cost > limit + EPSILON) return Infinity
    if (fits(now, cost)) return now
    const c = countersAt(now)
    let t: number
    if (c.current + cost <= limit + EPSILON && c.previous > 0) {
      // The previous window's weight fades within this window: solve
      // previous × (W − e) / W + current + cost = limit for the elapsed time e.
      t = windowStart(c.window) + windowMs * (1 - (limit - c.current - cost) / c.previous)
    } else {
      // Only once this window becomes the previous one, and fades enough.
      t = windowStart(c.window + 1) + (c.current > 0 ? windowMs * Math.max(0, 1 - (limit - cost) / c.current) : 0)
    }
    return settle(Math.max(now, t), (at) => fits(at, cost), now)
  }

  return {
    name: 'sliding-window-counter',
    admit(now: number, cost: number): Admission {
      const c = countersAt(now)
      state.window = c.window
      state.previous = c.previous
      state.current = c.current
      const before = estimate(state, now)
      const admitted = before + cost <= limit + EPSILON
      if (admitted) state.current += cost
      const end = windowStart(state.window + 1)
      // Fully replenished when neither counter weighs any more: the current count
      // fades through the next window, the previous one by this window's end.
      const resetAt = state.current > 0 ? end + windowMs : state.previous > 0 ? end : now
      const admission: Admission = {
        admitted,
        remaining: wholeRemaining(limit - (admitted ? before + cost : before)),
        limit,
        resetMs: resetAt - now,
        windowMs,
        policy,
      }
      if (!admitted) admission.retryAfterMs = nextAdmitAt(now, cost) - now
      return admission
    },
    nextAdmitAt,
  }
}
