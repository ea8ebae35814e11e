// AWS SDK for JavaScript v3 "adaptive" retry mode, modelled on @smithy/util-retry:
// the DefaultRateLimiter (CUBIC over a token bucket, enabled on the first throttle)
// plus the standard strategy's backoff and retry quota. Constants are the SDK's
// constructor defaults; see /docs/algorithms.md for the modelling choices.
import type { Pacer, PacerInit, PacerState, Signal, Strategy } from '../../core/types.js'

export interface AwsAdaptiveOptions {
  /** Multiplicative decrease on a throttle. Default 0.7. */
  beta?: number
  /** CUBIC scale constant C. Default 0.4. */
  scaleConstant?: number
  /** Weight of the newest bucket in the measured send rate. Default 0.8. */
  smooth?: number
  /** Floor of the fill rate (tokens/s). Default 0.5. */
  minFillRate?: number
  /** Floor of the bucket capacity (tokens). Default 1. */
  minCapacity?: number
  /** Backoff base for throttling errors (429). Default 500 ms. */
  throttlingBaseDelayMs?: number
  /** Backoff base for transient errors (503, network). Default 100 ms. */
  transientBaseDelayMs?: number
  /** Backoff cap. Default 20 000 ms. */
  maxBackoffMs?: number
  /** Retry quota capacity. Default 500. */
  retryQuota?: number
  /** Quota cost of retrying a throttling error. Default 5. */
  throttlingRetryCost?: number
  /** Quota cost of retrying a transient error. Default 10. */
  transientRetryCost?: number
  /** The SDK waits for Retry-After but at most backoff + this. Default 5000 ms. */
  retryAfterSlackMs?: number
}

export const AWS_ADAPTIVE_DEFAULTS: Required<AwsAdaptiveOptions> = {
  beta: 0.7,
  scaleConstant: 0.4,
  smooth: 0.8,
  minFillRate: 0.5,
  minCapacity: 1,
  throttlingBaseDelayMs: 500,
  transientBaseDelayMs: 100,
  maxBackoffMs: 20_000,
  retryQuota: 500,
  throttlingRetryCost: 5,
  transientRetryCost: 10,
  retryAfterSlackMs: 5000,
}

const KIND = 'aws-adaptive'

/** The SDK rounds its rates to 8 decimals (`parseFloat(x.toFixed(8))`). */
const precise = (value: number): number => Number.parseFloat(value.toFixed(8))

export function awsAdaptive(options: AwsAdaptiveOptions = {}): Strategy {
  const o = { ...AWS_ADAPTIVE_DEFAULTS }
  for (const key of Object.keys(AWS_ADAPTIVE_DEFAULTS) as (keyof AwsAdaptiveOptions)[]) {
    const value = options[key]
    if (typeof value === 'number' && Number.isFinite(value)) o[key] = value
  }
  return { name: KIND, create: (init) => createAwsAdaptivePacer(o, init) }
}

function createAwsAdaptivePacer(o: Required<AwsAdaptiveOptions>, init: PacerInit): Pacer {
  const seconds = (now: number): number => now / 1000
  // DefaultRateLimiter state, as its constructor sets it (times in seconds).
  let enabled = false
  let currentCapacity = 0
  let fillRate = o.minFillRate
  let maxCapacity = o.minCapacity
  let lastMaxRate = 0
  let measuredTxRate = 0
  let requestCount = 0
  let lastThrottleTime = seconds(init.now)
  let lastTxRateBucket = Math.floor(seconds(init.now))
  let lastTimestamp = 0
  let timeWindow = 0
  // Standard retry strategy's quota; costs of retries granted and not yet resolved, in order.
  let quota = o.retryQuota
  const pendingRetryCosts: Array<number | null> = []
  const random = init.random

  const refilled = (now: number): number => {
    if (!lastTimestamp) return currentCapacity
    return Math.min(maxCapacity, currentCapacity + (seconds(now) - lastTimestamp) * fillRate)
  }
  const refill = (now: number): void => {
    currentCapacity = refilled(now)
    lastTimestamp = seconds(now)
  }
  const calculateTimeWindow = (): void => {
    timeWindow = precise(Math.cbrt((lastMaxRate * (1 - o.beta)) / o.scaleConstant))
  }
  const updateMeasuredRate = (now: number): void => {
    const timeBucket = Math.floor(seconds(now) * 2) / 2
    requestCount++
    if (timeBucket > lastTxRateBucket) {
      const currentRate = requestCount / (timeBucket - lastTxRateBucket)
      measuredTxRate = precise(currentRate * o.smooth + measuredTxRate * (1 - o.smooth))
      requestCount = 0
      lastTxRateBucket = timeBucket
    }
  }

  const backoffMs = (failures: number, throttling: boolean): number => {
    const base = throttling ? o.throttlingBaseDelayMs : o.transientBaseDelayMs
    const i = Math.max(0, failures - 1)
    return Math.floor(random() * Math.min(base * 2 ** Math.min(i, 60), o.maxBackoffMs))
  }

  return {
    delayMs(now) {
      if (!enabled) return 0
      const have = refilled(now)
      // acquireTokenBucket(1): sleep (1 − capacity)/fillRate when short of one token.
      return have >= 1 ? 0 : Math.ceil(((1 - have) / fillRate) * 1000)
    },
    onSend(now) {
      if (!enabled) return
      refill(now)
      currentCapacity -= 1
    },
    onResult(now, signal: Signal) {
      // The SDK classifies 429 as THROTTLING; 503 and transport failures are TRANSIENT.
      const throttling = signal.kind === 'throttled'
      if (signal.kind === 'ok') {
        // recordSuccess: a successful retry refunds its cost, a first attempt adds 1.
        const cost = pendingRetryCosts.length > 0 ? pendingRetryCosts.shift() : null
        quota = Math.min(o.retryQuota, quota + (cost ?? 1))
      }
      let calculated: number
      updateMeasuredRate(now)
      if (throttling) {
        const rateToUse = enabled ? Math.min(measuredTxRate, fillRate) : measuredTxRate
        lastMaxRate = rateToUse
        calculateTimeWindow()
        lastThrottleTime = seconds(now)
        calculated = precise(rateToUse * o.beta)
        enabled = true
      } else {
        calculateTimeWindow()
        calculated = precise(o.scaleConstant * (seconds(now) - lastThrottleTime - timeWindow) ** 3 + lastMaxRate)
      }
      const newRate = Math.min(calculated, 2 * measuredTxRate)
      refill(now)
      fillRate = Math.max(newRate, o.minFillRate)
      maxCapacity = Math.max(newRate, o.minCapacity)
      currentCapacity = Math.min(currentCapacity, maxCapacity)
    },
    retryDelayMs(now, failures, signal) {
      const throttling = signal.kind === 'throttled'
      const cost = throttling ? o.throttlingRetryCost : o.transientRetryCost
      let delay = backoffMs(failures, throttling)
      if (quota >= cost) {
        quota -= cost
        pendingRetryCosts.push(cost)
      } else {
        // Quota empty: the SDK would give up. In an unlimited-retry harness the caller
        // re-issues the call, which we model as waiting the backoff once more; that
        // call is a first attempt again (its success adds 1, refunds nothing).
        delay += backoffMs(failures, throttling)
        pendingRetryCosts.push(null)
      }
      if (signal.retryAt !== undefined && Number.isFinite(signal.retryAt)) {
        // max(backoff, min(retryAfter, backoff + 5 s)): a long Retry-After is cut short.
        delay = Math.max(delay, Math.min(signal.retryAt - now, delay + o.retryAfterSlackMs))
      }
      return Math.max(0, delay)
    },
    toJSON(now): PacerState {
      return { kind: KIND, version: 1, savedAt: now, enabled, fillRate, measuredTxRate, quota }
    },
    get ratePerSecond() {
      return enabled ? fillRate : Infinity
    },
    tokens(now) {
      return enabled ? refilled(now) : Infinity
    },
  }
}
