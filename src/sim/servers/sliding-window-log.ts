// Sliding window log: every admitted request is remembered for `windowMs`; a request
// passes when the units admitted in the trailing window plus its cost fit the limit.
//
// Mapping of QuotaConfig: `limit = capacity` units in any trailing window of
// `capacity / perMinute` minutes (100 in any 75 s for 100 / 80 per min): same burst,
// same long-run rate. Freed quota comes back exactly when old entries age out, so
// a saturated log replays the admission pattern of the previous window.
import type { Admission, ServerModel } from '../types.js'
import { DEFAULT_POLICY, EPSILON, assertPositive, settle, wholeRemaining } from './quota-math.js'

export interface SlidingWindowLogOptions {
  limit: number
  windowMs: number
  /** Creation time in ms (unused by the arithmetic; accepted for a uniform factory shape). */
  now?: number
  policy?: string
}

export function slidingWindowLog(options: SlidingWindowLogOptions): ServerModel {
  const { limit, windowMs } = options
  assertPositive('limit', limit)
  assertPositive('windowMs', windowMs)
  const policy = options.policy ?? DEFAULT_POLICY
  // Parallel arrays with a moving head: admitted times (non-decreasing) and costs.
  let times: number[] = []
  let costs: number[] = []
  let head = 0
  let used = 0 // sum of costs[head..]

  // An entry at time `e` counts at `now` while e > now - windowMs.
  const expiredBy = (entryTime: number, now: number): boolean => entryTime <= now - windowMs

  // Pure: units in the trailing window at `now`.
  const usedAt = (now: number): number => {
    let sum = used
    for (let i = head; i < times.length && expiredBy(times[i]!, now); i++) sum -= costs[i]!
    return sum
  }

  const expire = (now: number): void => {
    while (head < times.length && expiredBy(times[head]!, now)) used -= costs[head++]!
    if (head === times.length) {
      used = 0 // drop float residue once the log is empty
    }
    if (head > 1024 && head * 2 > times.length) {
      times = times.slice(head)
      costs = costs.slice(head)
      head = 0
    }
  }

  const nextAdmitAt = (now: number, cost: number): number => {
    if (cost > limit + EPSILON) return Infinity
    let excess = usedAt(now) + cost - limit
    if (excess <= EPSILON) return now
    let t = now
    for (let i = head; i < times.length && excess > EPSILON; i++) {
      const time = times[i]!
      if (expiredBy(time, now)) continue
      excess -= costs[i]!
      t = time + windowMs
    }
    return settle(t, (at) => usedAt(at) + cost <= limit + EPSILON, now)
  }

  return {
    name: 'sliding-window-log',
    admit(now: number, cost: number): Admission {
      expire(now)
      const admitted = used + cost <= limit + EPSILON
      if (admitted) {
        // Keep the log ordered even if a caller's clock steps back a little.
        const last = times.length > head ? times[times.length - 1]! : now
        times.push(Math.max(now, last))
        costs.push(cost)
        used += cost
      }
      const newest = times.length > head ? times[times.length - 1]! : undefined
      const admission: Admission = {
        admitted,
        remaining: wholeRemaining(limit - used),
        limit,
        resetMs: newest === undefined ? 0 : Math.max(0, newest + windowMs - now),
        windowMs,
        policy,
      }
      if (!admitted) admission.retryAfterMs = nextAdmitAt(now, cost) - now
      return admission
    },
    nextAdmitAt,
  }
}
