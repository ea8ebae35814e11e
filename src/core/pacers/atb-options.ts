// Options of the default ATB, with their defaults in one place.
import { checkKnownOptions, optionError } from './option-error.js'

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
  /** Per-request backoff after repeated 429s, in lane spacings: (2^(n−1) − 1) × factor × spacing. Default 4; 0 = none. */
  retryBackoffFactor?: number
  /** Cap of that per-request backoff. Default 60 000 ms. */
  maxRetryBackoffMs?: number
  /**
   * A lane that keeps meeting 429s keeps finding the quota dry (a stepped quota stays empty
   * until its next step): its per-request backoff is multiplied by the number of 429s it met
   * within `dryLaneWindowMs`, divided by this, between 1 and `dryLaneMaxBackoffFactor`. Default 2.
   */
  dryLaneThrottles?: number
  /** Window over which those 429s are counted. Default 300 000 ms. */
  dryLaneWindowMs?: number
  /** Largest multiplier of the per-request backoff of such a lane. Default 2; 1 = off. */
  dryLaneMaxBackoffFactor?: number
  /** On the lane's first 429, the rate is at most this multiple of its attempt rate. Default 0.35. */
  firstCutFactor?: number
  /** After the first cut, the first paced send waits a uniform fraction of one spacing (spreads a fleet's retries). Default true. */
  jitterFirstCut?: boolean
  /** Growth slows while the rate is within this fraction of the rate of the last cut. Default 0.3; 0 = no plateau. */
  plateauBand?: number
  /** Growth multiplier on the plateau. Default 0.1. */
  plateauGrowthFactor?: number
  /** The plateau lasts at most this long after the last 429 (capacity may have freed up since). Default 30 000 ms. */
  plateauMs?: number
  /**
   * After a 429 whose Retry-After is at most `steadyRetryAfterMs` (a continuously refilled
   * quota that is empty right now), a busy lane (at least `steadySuccesses` admissions within
   * `steadyWindowMs`) keeps its plateau this long instead of `plateauMs`. Default 140 000 ms;
   * `plateauMs` or less = off.
   */
  steadyPlateauMs?: number
  /** The plateau band of such a lane. Default 0.5. */
  steadyPlateauBand?: number
  /** Longest Retry-After that marks the quota as continuously refilled. Default 2 000 ms. */
  steadyRetryAfterMs?: number
  /** Admissions within `steadyWindowMs` that make a lane busy. Default 3. */
  steadySuccesses?: number
  /** Window over which those admissions are counted. Default 120 000 ms. */
  steadyWindowMs?: number
  /**
   * A steady lane whose probe failed (a 429 after a success since its last cut) is cut to this
   * multiple of the usual cut: the fleet is still spending all of the quota, so the share the
   * lane regained since its last cut was someone else's. Default 0.3; 1 = off.
   */
  steadyProbeCutFactor?: number
  /**
   * Once a steady lane's long plateau has run out without a 429, its growth doubles every this
   * many ms (capacity frees up only as other clients finish, and a lane left alone with a backlog
   * must climb from its share to the whole quota). Default 45 000 ms; 0 = off.
   */
  steadyGrowthDoublingMs?: number
  /** Largest multiple of `growthPerSecond` that doubling reaches. Default 8. */
  steadyMaxGrowthFactor?: number
  /**
   * Admissions within `steadyWindowMs` a lane needs for that faster growth: only a lane busy
   * enough to carry a backlog into the tail climbs faster. Default 10.
   */
  steadyGrowthSuccesses?: number
  /**
   * After a 429 whose Retry-After is longer than `steadyRetryAfterMs` (a quota refilled in lumps,
   * such as a bucket refilled every minute: empty until its next step), the plateau lasts this long
   * instead of `plateauMs`. The cut rate is the lane's share of one lump, and a lane that grows
   * past it within the next lump only empties that lump early. Default 60 000 ms; `plateauMs` or
   * less = off.
   */
  lumpPlateauMs?: number
  /**
   * A lane needs this many successes (since it started, or since congestion began) before a
   * rate is read from them; with fewer it paces as a cold start. Default 2.
   */
  minEvidence?: number
  /** Rate of a cold start (a first 429 with too few successes to measure): about UB's first step. Default 0.5/s. */
  coldStartRatePerSecond?: number
  /** Each further 429 of a lane that still has too few successes multiplies its rate by this. Default 0.125. */
  coldBackoffFactor?: number
  /**
   * A lane whose first 429 came while other attempts of it were still in flight (a burst
   * of concurrent callers) learned the quota's capacity, not its rate. It starts at the
   * cold-start rate and multiplies its rate by this on every success until its next 429
   * (TCP's slow start), instead of creeping up from a rate read off the burst. Default 1.5; 1 = off.
   */
  burstStartGrowth?: number
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
  jitterFirstCut: true,
  plateauBand: 0.3,
  plateauGrowthFactor: 0.1,
  plateauMs: 30_000,
  steadyPlateauMs: 140_000,
  steadyPlateauBand: 0.5,
  steadyRetryAfterMs: 2_000,
  steadySuccesses: 3,
  steadyWindowMs: 120_000,
  steadyProbeCutFactor: 0.3,
  steadyGrowthDoublingMs: 45_000,
  steadyMaxGrowthFactor: 8,
  steadyGrowthSuccesses: 10,
  lumpPlateauMs: 60_000,
  retryBackoffFactor: 4,
  maxRetryBackoffMs: 60_000,
  dryLaneThrottles: 2,
  dryLaneWindowMs: 300_000,
  dryLaneMaxBackoffFactor: 2,
  minEvidence: 2,
  coldStartRatePerSecond: 0.5,
  coldBackoffFactor: 0.125,
  burstStartGrowth: 1.5,
  minRatePerSecond: 0.01,
  maxRatePerSecond: Infinity,
  burstUnits: 1,
  usingRateSlack: 2,
  paceWindowMs: 10_000,
  calmAfterMs: 600_000,
  honourRetryAfter: true,
}

/** How an option's value meets the quota's time scale. */
export type OptionScale =
  /** A duration or rate run on the announced window (RateLimit-Policy); as given without one. */
  | 'window'
  /** A count or a factor: the same at every scale. */
  | 'none'
  /** An absolute duration or rate, listed as an exemption. */
  | 'absolute'

/** What stands behind an option's default: for the table `npm run results` writes into docs/algorithms.md. */
export interface OptionNote {
  scale: OptionScale
  /** The measurement (or the lack of one) behind the default, one sentence. */
  measured: string
}

const FITTED = 'fitted with the rest at the paper scale (k = 1); no measurement of its own'

export const ATB_OPTION_NOTES: Record<keyof AtbOptions, OptionNote> = {
  windowMs: { scale: 'window', measured: FITTED },
  minSpanMs: { scale: 'window', measured: 'one early success read over less reads as a high rate (a lane waited tens of seconds for its retry)' },
  minSamples: { scale: 'none', measured: 'a slow lane (one success a minute) read 0 or 1 successes in a fixed window' },
  rateMargin: { scale: 'none', measured: 'findings 5: a rate capped at 1.5 × the own success rate fixed most of the paper ATB\'s bursts' },
  growthPerSecond: { scale: 'window', measured: 'the largest single cause of 429s off the paper scale (k = 0.1 and 60, all other options scaled)' },
  fallbackFactor: { scale: 'none', measured: FITTED },
  maxCutFactor: { scale: 'none', measured: FITTED },
  retryBackoffFactor: { scale: 'none', measured: FITTED },
  maxRetryBackoffMs: { scale: 'window', measured: 'unscaled at k = 0.1 it alone takes status-only runs from 1.10 to 1.71 × the oracle' },
  dryLaneThrottles: { scale: 'none', measured: 'stepped bucket: a lane meeting 429s finds the quota dry until its next step' },
  dryLaneWindowMs: { scale: 'window', measured: FITTED },
  dryLaneMaxBackoffFactor: { scale: 'none', measured: FITTED },
  firstCutFactor: { scale: 'none', measured: FITTED },
  jitterFirstCut: { scale: 'none', measured: 'the fleet\'s first cuts come together; a uniform share of a spacing spreads their retries' },
  plateauBand: { scale: 'none', measured: FITTED },
  plateauGrowthFactor: { scale: 'none', measured: FITTED },
  plateauMs: { scale: 'window', measured: 'unscaled at k = 0.1 it costs status-only runs 1.10 → 1.28 × the oracle' },
  steadyPlateauMs: { scale: 'window', measured: '20 sequential clients over 1.6 × the quota paid about 65 probing 429s a run without it' },
  steadyPlateauBand: { scale: 'none', measured: FITTED },
  steadyRetryAfterMs: { scale: 'window', measured: 'a continuous bucket answers Retry-After: 1 (whole seconds); a stepped one up to its step' },
  steadySuccesses: { scale: 'none', measured: 'a long plateau for light lanes took 100 light clients to 1.27 × UB\'s time' },
  steadyWindowMs: { scale: 'window', measured: FITTED },
  steadyProbeCutFactor: { scale: 'none', measured: FITTED },
  steadyGrowthDoublingMs: { scale: 'window', measured: 'at a constant 2%/s the last of 5 clients over 700 requests took 1.16 × UB\'s time' },
  steadyMaxGrowthFactor: { scale: 'none', measured: FITTED },
  steadyGrowthSuccesses: { scale: 'none', measured: 'with the plain busy test, 20 light clients\' faster probes cost 429s' },
  lumpPlateauMs: { scale: 'window', measured: 'on a stepped bucket every busy lane met one 429 per step with the plain plateau' },
  minEvidence: { scale: 'none', measured: 'one success over the minimum span read as 0.1/s and held a retry for tens of seconds' },
  coldStartRatePerSecond: { scale: 'absolute', measured: 'exemption: a lane with no evidence starts at exponential backoff\'s first step (about a second), then doubles while never admitted, which finds any scale in log2(k) tries' },
  coldBackoffFactor: { scale: 'none', measured: 'a UB-like halving cost a 100-client fleet twice the extra 429s of ×1/8 (lanes admitted before only)' },
  burstStartGrowth: { scale: 'none', measured: 'TCP\'s slow start: a burst\'s first 429 measures capacity, not rate' },
  minRatePerSecond: { scale: 'window', measured: 'unscaled at k = 60 the floor alone brings 123 → 596 429s (27 clients)' },
  maxRatePerSecond: { scale: 'window', measured: 'no ceiling by default (the user\'s bound)' },
  burstUnits: { scale: 'none', measured: FITTED },
  usingRateSlack: { scale: 'none', measured: FITTED },
  paceWindowMs: { scale: 'absolute', measured: 'only without a policy (X-RateLimit-*): the pace set against remaining/reset; ' + FITTED },
  calmAfterMs: { scale: 'window', measured: 'unscaled at k = 60 a lane turns calm between its own sends: 123 → 269 429s' },
  honourRetryAfter: { scale: 'none', measured: 'the server\'s word: never send before its Retry-After' },
}

/** Options that may be 0 (a feature switched off, or no minimum); the others must be above 0. */
const ZERO_ALLOWED = new Set<keyof AtbOptions>([
  'minSpanMs',
  'minSamples',
  'growthPerSecond',
  'plateauBand',
  'plateauGrowthFactor',
  'plateauMs',
  'steadyPlateauMs',
  'steadyPlateauBand',
  'steadyRetryAfterMs',
  'steadySuccesses',
  'steadyGrowthDoublingMs',
  'steadyGrowthSuccesses',
  'lumpPlateauMs',
  'retryBackoffFactor',
  'maxRetryBackoffMs',
  'minEvidence',
])
const BOOLEAN_OPTIONS = new Set<keyof AtbOptions>(['honourRetryAfter', 'jitterFirstCut'])

/**
 * Merge options over the defaults. An unknown option, or a value that makes no sense (not a
 * number, NaN, negative, 0 where 0 means nothing, a rate ceiling below the floor), throws a
 * TypeError naming the option, as `createClient` does for its own.
 */
export function resolveAtbOptions(options: AtbOptions = {}): ResolvedAtbOptions {
  const o: ResolvedAtbOptions = { ...ATB_DEFAULTS }
  checkKnownOptions('atb', options, Object.keys(ATB_DEFAULTS))
  const target = o as unknown as Record<string, number | boolean>
  for (const [key, value] of Object.entries(options) as Array<[keyof AtbOptions, unknown]>) {
    if (value === undefined) continue
    if (BOOLEAN_OPTIONS.has(key)) {
      if (typeof value !== 'boolean') throw optionError('atb', key, 'a boolean', value)
    } else {
      const zero = ZERO_ALLOWED.has(key)
      const finite = key === 'maxRatePerSecond' ? !Number.isNaN(value) : Number.isFinite(value)
      if (typeof value !== 'number' || !finite || value < 0 || (value === 0 && !zero)) {
        throw optionError('atb', key, zero ? 'a finite number ≥ 0' : 'a number > 0', value)
      }
    }
    target[key] = value as number | boolean
  }
  if (o.maxRatePerSecond < o.minRatePerSecond) throw optionError('atb', 'maxRatePerSecond', `at least minRatePerSecond (${o.minRatePerSecond})`, o.maxRatePerSecond)
  return o
}
