// Token bucket, the paper's server-side limiter (Envoy's HTTP local rate limit filter).
//
// Mapping of QuotaConfig: `capacity` is the bucket size (and its initial content: the
// bucket starts full, as Envoy's `max_tokens` does); `perMinute` is the refill rate.
// - continuous: tokens accrue fractionally, `perMinute / 60000` per ms.
// - stepped: `perMinute * stepIntervalMs / 60000` tokens land at once every
//   `stepIntervalMs`, counted from creation — Envoy's `tokens_per_fill` every
//   `fill_interval` (default 80 every 60 s). The refill granularity changes the
//   dynamics a lot (findings.md #2), hence both.
// Headers announce `capacity` per `capacity / perMinute` minutes (q=100;w=75), which
// carries both the burst and the long-run rate; `resetMs` is the time to a full bucket.
import type { Admission, ServerModel } from '../types.js'
import { DEFAULT_POLICY, EPSILON, assertPositive, quotaWindowMs, settle, wholeRemaining } from './quota-math.js'

export type Refill = 'continuous' | 'stepped'

export interface TokenBucketOptions {
  capacity: number
  perMinute: number
  /** Default `continuous`. */
  refill?: Refill
  /** Stepped refill only; default 60 000 (Envoy `fill_interval: 60s`). */
  stepIntervalMs?: number
  /** Creation time in ms (the bucket is full then, and stepped refills count from it). Default 0. */
  now?: number
  /** Policy name in Admissions. Default `global`. */
  policy?: string
}

export function tokenBucket(options: TokenBucketOptions): ServerModel {
  const { capacity, perMinute } = options
  assertPositive('capacity', capacity)
  assertPositive('perMinute', perMinute)
  const refill = options.refill ?? 'continuous'
  const policy = options.policy ?? DEFAULT_POLICY
  const windowMs = quotaWindowMs(options)
  return refill === 'stepped'
    ? steppedBucket(capacity, perMinute, options.stepIntervalMs ?? 60_000, options.now ?? 0, policy, windowMs)
    : continuousBucket(capacity, perMinute, options.now ?? 0, policy, windowMs)
}

function continuousBucket(capacity: number, perMinute: number, createdAt: number, policy: string, windowMs: number): ServerModel {
  const perMs = perMinute / 60_000
  let tokens = capacity
  let last = createdAt

  // Pure: the content the bucket would have at `now` (time never runs backwards).
  const tokensAt = (now: number): number => (now <= last ? tokens : Math.min(capacity, tokens + (now - last) * perMs))

  const nextAdmitAt = (now: number, cost: number): number => {
    if (cost > capacity + EPSILON) return Infinity
    const have = tokensAt(now)
    if (have + EPSILON >= cost) return now
    return settle(now + (cost - have) / perMs, (t) => tokensAt(t) + EPSILON >= cost, now)
  }

  return {
    name: 'token-bucket-continuous',
    admit(now: number, cost: number): Admission {
      // State moves only on admission: refusals change nothing, and fewer updates
      // accumulate less floating-point drift.
      let have = tokensAt(now)
      const admitted = have + EPSILON >= cost
      if (admitted) {
        have = Math.max(0, have - cost)
        tokens = have
        if (now > last) last = now
      }
      const admission: Admission = {
        admitted,
        remaining: wholeRemaining(have),
        limit: capacity,
        resetMs: (capacity - have) / perMs,
        windowMs,
        policy,
      }
      if (!admitted) admission.retryAfterMs = nextAdmitAt(now, cost) - now
      return admission
    },
    nextAdmitAt,
  }
}

function steppedBucket(
  capacity: number,
  perMinute: number,
  stepIntervalMs: number,
  createdAt: number,
  policy: string,
  windowMs: number,
): ServerModel {
  assertPositive('stepIntervalMs', stepIntervalMs)
  const perStep = (perMinute * stepIntervalMs) / 60_000
  let tokens = capacity
  let steps = 0 // refills applied so far

  const stepsAt = (now: number): number => Math.max(steps, Math.floor((now - createdAt) / stepIntervalMs))
  const tokensAt = (now: number): number => {
    const due = stepsAt(now) - steps
    return due === 0 ? tokens : Math.min(capacity, tokens + due * perStep)
  }
  // Time of the k-th refill after the one at `stepsAt(now)`.
  const refillTime = (now: number, k: number): number => createdAt + (stepsAt(now) + k) * stepIntervalMs

  const nextAdmitAt = (now: number, cost: number): number => {
    if (cost > capacity + EPSILON) return Infinity
    const have = tokensAt(now)
    if (have + EPSILON >= cost) return now
    const k = Math.ceil((cost - have - EPSILON) / perStep)
    return settle(refillTime(now, k), (t) => tokensAt(t) + EPSILON >= cost, now)
  }

  return {
    name: 'token-bucket-stepped',
    admit(now: number, cost: number): Admission {
      tokens = tokensAt(now)
      steps = stepsAt(now)
      const admitted = tokens + EPSILON >= cost
      if (admitted) tokens = Math.max(0, tokens - cost)
      const missing = capacity - tokens
      const admission: Admission = {
        admitted,
        remaining: wholeRemaining(tokens),
        limit: capacity,
        resetMs: missing <= EPSILON ? 0 : refillTime(now, Math.ceil((missing - EPSILON) / perStep)) - now,
        windowMs,
        policy,
      }
      if (!admitted) admission.retryAfterMs = nextAdmitAt(now, cost) - now
      return admission
    },
    nextAdmitAt,
  }
}
