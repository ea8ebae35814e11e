// The simulator's server models by name. Every kind maps the paper's QuotaConfig
// (`capacity` burst, `perMinute` long-run rate) onto its own terms so that all of
// them admit the same long-run rate and a comparable burst (see each file's header).
import type { QuotaConfig, ServerKind, ServerModel } from '../types.js'
import { fixedWindow } from './fixed-window.js'
import { gcra } from './gcra.js'
import { leakyBucket } from './leaky-bucket.js'
import { quotaWindowMs } from './quota-math.js'
import { slidingWindowCounter } from './sliding-window-counter.js'
import { slidingWindowLog } from './sliding-window-log.js'
import { tokenBucket } from './token-bucket.js'

export { tokenBucket, type Refill, type TokenBucketOptions } from './token-bucket.js'
export { fixedWindow, type FixedWindowOptions } from './fixed-window.js'
export { slidingWindowLog, type SlidingWindowLogOptions } from './sliding-window-log.js'
export { slidingWindowCounter, type SlidingWindowCounterOptions } from './sliding-window-counter.js'
export { gcra, type GcraOptions } from './gcra.js'
export { leakyBucket, type LeakyBucketOptions } from './leaky-bucket.js'
export {
  endpointLimits,
  endpointLimitName,
  type EndpointLimit,
  type EndpointLimitedModel,
  type EndpointLimitsOptions,
} from './endpoint-limits.js'
export { quotaWindowMs } from './quota-math.js'

export const SERVER_KINDS: readonly ServerKind[] = [
  'token-bucket-continuous',
  'token-bucket-stepped',
  'fixed-window',
  'sliding-window-log',
  'sliding-window-counter',
  'gcra',
  'leaky-bucket',
]

export function isServerKind(value: unknown): value is ServerKind {
  return typeof value === 'string' && (SERVER_KINDS as readonly string[]).includes(value)
}

/** A fresh model of `kind` for `quota`, created (full) at `now`; `policy` names it in Admissions (default `global`). */
export function createServerModel(kind: ServerKind, quota: QuotaConfig, now: number, policy?: string): ServerModel {
  const { capacity, perMinute } = quota
  const named = policy === undefined ? {} : { policy }
  switch (kind) {
    case 'token-bucket-continuous':
      return tokenBucket({ capacity, perMinute, refill: 'continuous', now, ...named })
    case 'token-bucket-stepped':
      return tokenBucket({ capacity, perMinute, refill: 'stepped', stepIntervalMs: quota.stepIntervalMs ?? 60_000, now, ...named })
    case 'fixed-window':
      return fixedWindow({ limit: capacity, windowMs: quotaWindowMs(quota), now, ...named })
    case 'sliding-window-log':
      return slidingWindowLog({ limit: capacity, windowMs: quotaWindowMs(quota), now, ...named })
    case 'sliding-window-counter':
      return slidingWindowCounter({ limit: capacity, windowMs: quotaWindowMs(quota), now, ...named })
    case 'gcra':
      return gcra({ capacity, perMinute, now, ...named })
    case 'leaky-bucket':
      return leakyBucket({ perMinute, burst: Math.max(0, capacity - 1), now, ...named })
    default: {
      const unknown: never = kind
      throw new RangeError(`unknown server kind: ${String(unknown)}`)
    }
  }
}
