// Options of the default ATB, with their defaults in one place.

export interface AtbOptions {
  /** Window over which the admitted (successful) rate is measured. Default 60 000 ms. */
  windowMs?: number
  /** The admitted rate is averaged over at least this many admissions (widening the window for slow lanes). Default 6. */
  minSamples?: number
  /** Shortest span an admitted rate is averaged over, so one early success is not read as a high rate. Default 10 000 ms. */
  minSpanMs?: number
  /** The rate never exceeds this multiple of the admitted rate (or of the share learned at the last 429). Default 1.5. */
  rateMargin?: number
  /** Relative growth per second while congested and the lane is using its rate (e^(g·t)). Default 0.02. */
  growthPerSecond?: number
  /** On a 429 the rate falls to this multiple of the rate admitted during congestion. Default 1. */
  fallbackFactor?: number
  /** On a 429 the rate falls at least to this multiple of the current rate. Default 0.8. */
  maxCutFactor?: number
  /** Per-request backoff after repeated 429s, in lane spacings: (2^(n−1) − 1) × factor × spacing. Default 1; 0 = none. */
  retryBackoffFactor?: number
  /** Cap of that per-request backoff. Default 60 000 ms. */
  maxRetryBackoffMs?: number
  /** On the lane's first 429, the rate is at most this multiple of its attempt rate. Default 0.35. */
  firstCutFactor?: number
  /** Rate floor while pacing (units/s). Default 0.01. */
  minRatePerSecond?: number
  /** Rate ceiling while pacing (units/s). Default Infinity. */
  maxRatePerSecond?: number
  /** Bucket capacity while pacing: how many units may go back to back. Default 1. */
  burstUnits?: number
  /** A send within this multiple of the rate's spacing after the previous one counts as "using the rate". Default 2. */
  usingRateSlack?: number
  /** Window over which the lane's current pace is measured against `remaining`. Default 10 000 ms. */
  paceWindowMs?: number
  /** With no congestion for this long, the lane stops pacing (back to no cost). Default 600 000 ms. */
  calmAfterMs?: number
  /** Never send before a server's Retry-After, lane-wide. Default true. */
  honourRetryAfter?: boolean
}

export type ResolvedAtbOptions = Required<AtbOptions>

export const ATB_DEFAULTS: ResolvedAtbOptions = {
  windowMs: 60_000,
  minSpanMs: 10_000,
  minSamples: 6,
  rateMargin: 1.5,
  growthPerSecond: 0.02,
  fallbackFactor: 1,
  maxCutFactor: 0.8,
  firstCutFactor: 0.35,
  retryBackoffFactor: 1,
  maxRetryBackoffMs: 60_000,
  minRatePerSecond: 0.01,
  maxRatePerSecond: Infinity,
  burstUnits: 1,
  usingRateSlack: 2,
  paceWindowMs: 10_000,
  calmAfterMs: 600_000,
  honourRetryAfter: true,
}

/** Merge options over the defaults; values that make no sense fall back to the default. */
export function resolveAtbOptions(options: AtbOptions = {}): ResolvedAtbOptions {
  const o: ResolvedAtbOptions = { ...ATB_DEFAULTS, ...(options as any).x }
  const positive = (key: Exclude<keyof AtbOptions, 'honourRetryAfter'>, allowZero = false): void => {
    const value = options[key]
    if (typeof value === 'number' && !Number.isNaN(value) && (value > 0 || (allowZero && value === 0))) o[key] = value
  }
  positive('windowMs')
  positive('minSpanMs', true)
  positive('minSamples', true)
  positive('rateMargin')
  positive('growthPerSecond', true)
  positive('fallbackFactor')
  positive('maxCutFactor')
  positive('firstCutFactor')
  positive('retryBackoffFactor', true)
  positive('maxRetryBackoffMs', true)
  positive('minRatePerSecond')
  positive('maxRatePerSecond')
  positive('burstUnits')
  positive('usingRateSlack')
  positive('paceWindowMs')
  positive('calmAfterMs')
  if (typeof options.honourRetryAfter === 'boolean') o.honourRetryAfter = options.honourRetryAfter
  if (o.maxRatePerSecond < o.minRatePerSecond) o.maxRatePerSecond = o.minRatePerSecond
  return o
}
