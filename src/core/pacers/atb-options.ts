// Options of the default ATB: the few a measurement explains, each with its default and the
// measurement behind it (ATB_OPTION_NOTES, the table in docs/algorithms.md). Everything else the
// pacer decides with is an internal constant (atb-constants.ts).
import { ATB_CONSTANTS, type AtbConstants } from './atb-constants.js'
import { checkKnownOptions, optionError } from './option-error.js'

export interface AtbOptions {
  /** Shortest span an admitted rate is averaged over, so one early success is not read as a high rate. Default 10 000 ms. */
  minSpanMs?: number
  /** The rate never exceeds this multiple of the admitted rate (or of the share learned at the last 429). Default 1.5. */
  rateMargin?: number
  /** Relative growth per second while congested and the lane is using its rate (e^(g·t)). Default 0.02. */
  growthPerSecond?: number
  /** Cap of the per-request backoff after repeated 429s. Default 60 000 ms. */
  maxRetryBackoffMs?: number
  /** The plateau (slow growth near the rate of the last cut) lasts at most this long after the last 429. Default 30 000 ms. */
  plateauMs?: number
  /**
   * After a 429 whose Retry-After is a second or so (a continuously refilled quota that is empty
   * right now), a busy lane keeps its plateau this long instead of `plateauMs`. Default 140 000 ms;
   * `plateauMs` or less = off.
   */
  steadyPlateauMs?: number
  /** Rate of a cold start (a first 429 with too few successes to measure): about UB's first step. Default 0.5/s. */
  coldStartRatePerSecond?: number
  /** Rate floor while pacing (units/s). Default 0.01. */
  minRatePerSecond?: number
  /** Rate ceiling while pacing (units/s). Default Infinity. */
  maxRatePerSecond?: number
  /** With no congestion for this long, the lane stops pacing (back to no cost). Default 600 000 ms. */
  calmAfterMs?: number
  /** Never send before a server's Retry-After, lane-wide. Default true. */
  honourRetryAfter?: boolean
  /**
   * The rate your quota refills at, in units per second, if you know it (500 per minute: 500 / 60;
   * 5 000 per hour: 5000 / 3600). Every duration and rate above runs on it: they were measured on
   * a quota of 100 per 75 s (1.33/s), and a quota ten times faster runs them ten times faster.
   * Default: each lane measures its quota's time scale (how long the quota lasted before its first
   * 429), which one lane reads noisily; a RateLimit-Policy window the server announces comes first.
   */
  quotaPerSecond?: number
}

/** The options with their defaults: every one has a value but the quota's rate, measured unless given. */
export type AtbDefaults = Required<Omit<AtbOptions, 'quotaPerSecond'>> & { quotaPerSecond: number | undefined }

/** Every value the pacer decides with: the options, resolved, and the internal constants (atb-constants.ts). */
export type ResolvedAtbOptions = AtbDefaults & AtbConstants

export const ATB_DEFAULTS: AtbDefaults = {
  minSpanMs: 10_000,
  rateMargin: 1.5,
  growthPerSecond: 0.02,
  maxRetryBackoffMs: 60_000,
  plateauMs: 30_000,
  steadyPlateauMs: 140_000,
  coldStartRatePerSecond: 0.5,
  minRatePerSecond: 0.01,
  maxRatePerSecond: Infinity,
  calmAfterMs: 600_000,
  honourRetryAfter: true,
  quotaPerSecond: undefined,
}

/** How an option's value meets the quota's time scale. */
export type OptionScale =
  /** A duration or rate run on the announced window (RateLimit-Policy); without one, on the lane's measured time scale (atb-time-scale.ts). */
  | 'window'
  /** A count or a factor: the same at every scale. */
  | 'none'
  /** An absolute duration or rate, listed as an exemption. */
  | 'absolute'
  /** The time scale itself, given by the user. */
  | 'given'

/** What stands behind an option's default: for the table `npm run results` writes into docs/algorithms.md. */
export interface OptionNote {
  scale: OptionScale
  /** The measurement (or the lack of one) behind the default, one sentence. */
  measured: string
}

export const ATB_OPTION_NOTES: Record<keyof AtbOptions, OptionNote> = {
  minSpanMs: { scale: 'window', measured: 'one early success read over less reads as a high rate (a lane waited tens of seconds for its retry)' },
  rateMargin: { scale: 'none', measured: 'findings 5: a rate capped at 1.5 × the own success rate fixed most of the paper ATB\'s bursts' },
  growthPerSecond: { scale: 'window', measured: 'the largest single cause of 429s off the paper scale (k = 0.1 and 60, all other options scaled)' },
  maxRetryBackoffMs: { scale: 'window', measured: 'unscaled at k = 0.1 it alone takes status-only runs from 1.10 to 1.71 × the oracle' },
  plateauMs: { scale: 'window', measured: 'unscaled at k = 0.1 it costs status-only runs 1.10 → 1.28 × the oracle' },
  steadyPlateauMs: { scale: 'window', measured: '20 sequential clients over 1.6 × the quota paid about 65 probing 429s a run without it' },
  coldStartRatePerSecond: { scale: 'window', measured: 'a lane with no evidence starts at exponential backoff\'s first step (about a second on the paper\'s scale), then doubles while never admitted, which finds any scale in log2(k) tries; a lane that knows no scale yet keeps the absolute second' },
  minRatePerSecond: { scale: 'window', measured: 'unscaled at k = 60 the floor alone brings 123 → 596 429s (27 clients)' },
  maxRatePerSecond: { scale: 'window', measured: 'no ceiling by default (the user\'s bound)' },
  calmAfterMs: { scale: 'window', measured: 'unscaled at k = 60 a lane turns calm between its own sends: 123 → 269 429s' },
  honourRetryAfter: { scale: 'none', measured: 'the server\'s word: never send before its Retry-After' },
  quotaPerSecond: {
    scale: 'given',
    measured: 'the user\'s word, measured per lane when not given: given the true rate, the scale grid passes 280 of 360 cells with 16 scale-free breaks (measured: 228 and 66)',
  },
}

/** Options that may be 0 (a feature switched off, or no minimum); the others must be above 0. */
const ZERO_ALLOWED = new Set<keyof AtbOptions>([
  'minSpanMs',
  'growthPerSecond',
  'plateauMs',
  'steadyPlateauMs',
  'maxRetryBackoffMs',
])
const BOOLEAN_OPTIONS = new Set<keyof AtbOptions>(['honourRetryAfter'])

/**
 * Merge options over the defaults. An unknown option, or a value that makes no sense (not a
 * number, NaN, negative, 0 where 0 means nothing, a rate ceiling below the floor), throws a
 * TypeError naming the option, as `createClient` does for its own.
 */
export function resolveAtbOptions(options: AtbOptions = {}): ResolvedAtbOptions {
  const o: ResolvedAtbOptions = { ...ATB_CONSTANTS, ...ATB_DEFAULTS }
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
