// Leaky bucket as nginx `limit_req zone=… rate=…; limit_req burst=B nodelay;` runs it.
//
// nginx keeps an `excess` per key: on each request
//   excess = max(excess − rate × elapsed + 1, 0)      (the first request of a key: 0)
// and refuses it (503, or `limit_req_status 429`) when excess > burst; refusals leave
// the state alone. Writing level = excess + 1 after an admission turns this into a
// bucket of size burst + 1 that drains at `rate` and to which each request adds its
// cost: level = max(level − rate × elapsed, 0) + cost, refused when level > burst + 1.
// That is what this model computes. Without `nodelay` nginx admits exactly the same
// requests but holds the excess ones back (excess / rate); this model answers at
// once, which is the `nodelay` behaviour.
//
// Mapping of QuotaConfig: rate = perMinute, burst = capacity − 1 (so `capacity`
// requests pass at once from idle, like a full token bucket). nginx's own integer
// rate (milli-requests per second: 80r/m → 1333) is not reproduced.
import type { Admission, ServerModel } from '../types.js'
import { DEFAULT_POLICY, EPSILON, assertPositive, settle, wholeRemaining } from './quota-math.js'

export interface LeakyBucketOptions {
  /** Drain rate, requests per minute (nginx `rate=80r/m`). */
  perMinute: number
  /** nginx `burst`: requests tolerated above the rate. */
  burst: number
  /** Creation time in ms. Default 0. */
  now?: number
  policy?: string
}

export function leakyBucket(options: LeakyBucketOptions): ServerModel {
  const { perMinute, burst } = options
  assertPositive('perMinute', perMinute)
  if (!(Number.isFinite(burst) && burst >= 0)) throw new RangeError(`burst must be a non-negative finite number, got ${burst}`)
  const policy = options.policy ?? DEFAULT_POLICY
  const size = burst + 1
  const perMs = perMinute / 60_000
  let level = 0
  let last = options.now ?? 0

  const levelAt = (now: number): number => (now <= last ? level : Math.max(0, level - (now - last) * perMs))
  const fits = (now: number, cost: number): boolean => levelAt(now) + cost <= size + EPSILON

  const nextAdmitAt = (now: number, cost: number): number => {
    if (cost > size + EPSILON) return Infinity
    if (fits(now, cost)) return now
    return settle(now + (levelAt(now) + cost - size) / perMs, (t) => fits(t, cost), now)
  }

  return {
    name: 'leaky-bucket',
    admit(now: number, cost: number): Admission {
      // Like nginx, only an admission stores anything.
      let current = levelAt(now)
      const admitted = current + cost <= size + EPSILON
      if (admitted) {
        current += cost
        level = current
        if (now > last) last = now
      }
      const admission: Admission = {
        admitted,
        remaining: wholeRemaining(size - current),
        limit: size,
        resetMs: current / perMs,
        windowMs: size / perMs,
        policy,
      }
      if (!admitted) admission.retryAfterMs = nextAdmitAt(now, cost) - now
      return admission
    },
    nextAdmitAt,
  }
}
