// GCRA (generic cell rate algorithm, as in redis-cell, Stripe, Rails' rate limiters):
// one stored number, the theoretical arrival time (TAT). Each unit advances TAT by the
// emission interval T; a request passes when the TAT it would leave behind is at most
// `capacity × T` ahead of now.
//
// Mapping of QuotaConfig: T = 60000 / perMinute ms (750 ms at 80 per min) and burst
// tolerance (capacity − 1) × T, so `capacity` requests pass at once from idle (TAT
// starts at creation, i.e. a full bucket). Its admissions are those of the continuous
// token bucket; what differs is the state (one timestamp) and the figures servers
// derive from it: remaining = how many emission intervals of slack are left.
import type { Admission, ServerModel } from '../types.js'
import { DEFAULT_POLICY, EPSILON, assertPositive, quotaWindowMs, settle, wholeRemaining } from './quota-math.js'

export interface GcraOptions {
  capacity: number
  perMinute: number
  /** Creation time in ms. Default 0. */
  now?: number
  policy?: string
}

export function gcra(options: GcraOptions): ServerModel {
  const { capacity, perMinute } = options
  assertPositive('capacity', capacity)
  assertPositive('perMinute', perMinute)
  const policy = options.policy ?? DEFAULT_POLICY
  const intervalMs = 60_000 / perMinute
  const toleranceMs = capacity * intervalMs
  const windowMs = quotaWindowMs(options)
  let tat = options.now ?? 0

  // Slack in units at `now`: how far TAT is below its ceiling `now + capacity × T`.
  const slackAt = (now: number): number => (now + toleranceMs - Math.max(tat, now)) / intervalMs

  const nextAdmitAt = (now: number, cost: number): number => {
    if (cost > capacity + EPSILON) return Infinity
    if (slackAt(now) + EPSILON >= cost) return now
    return settle(tat + cost * intervalMs - toleranceMs, (t) => slackAt(t) + EPSILON >= cost, now)
  }

  return {
    name: 'gcra',
    admit(now: number, cost: number): Admission {
      const admitted = slackAt(now) + EPSILON >= cost
      if (admitted) tat = Math.max(tat, now) + cost * intervalMs
      const admission: Admission = {
        admitted,
        remaining: wholeRemaining(slackAt(now)),
        limit: capacity,
        resetMs: Math.max(0, tat - now),
        windowMs,
        policy,
      }
      if (!admitted) admission.retryAfterMs = nextAdmitAt(now, cost) - now
      return admission
    },
    nextAdmitAt,
  }
}
