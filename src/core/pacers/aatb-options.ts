// Options of the default AATB, with their defaults in one place.
import { checkKnownOptions, optionError } from './option-error.js'
import type { AtbOptions, OptionNote } from './atb-options.js'

export interface AatbOptions {
  /** Options of the inner default ATB, which does all pacing when no aggregate applies. */
  atb?: AtbOptions
  /**
   * Routine report period while the lane is active (the paper's report window): the cadence at
   * which the lane hears the fleet. Before the lane has a spacing of its own, an aggregate may hold
   * a send at most 3 report windows (see aatb.ts, "Bounded influence"). Default 30 000 ms.
   */
  reportWindowMs?: number
  /**
   * After an aggregate reported a 429, the fleet counts as congested (and the lane keeps to its
   * fair share) for this long. An overloaded fleet that stops pacing at once probes the quota
   * again and pays a 429 per lane; five minutes covers the paper's runs. Default 300 000 ms.
   */
  congestionHoldMs?: number
  /**
   * A congested fleet whose attempts still come to at least this fraction of the quota rate
   * stays congested past `congestionHoldMs` (it would otherwise stop keeping to its shares
   * while it still needs the whole quota). Default 0.8.
   */
  busyFraction?: number
  /**
   * A lane whose last answer was a 429 may probe at its share (instead of the inner ATB's
   * back-off) once an aggregate received after that 429 shows the fleet's attempts below this
   * fraction of the quota rate: the quota has been refilling unused. Default 0.5: a fleet
   * attempting less than half the quota's rate leaves at least half of it to refill, and on a
   * sliding window what is not taken is lost (0.3 left the real-trace runs there at 1.15–1.16 ×
   * UB's time).
   */
  idleFraction?: number
  /**
   * The lane keeps to this fraction of its fair share, so that a fleet keeping to its shares
   * does not drain a stepped quota just before each step. Default 0.97.
   */
  shareMargin?: number
}

/**
 * AATB's internal constants: values no measurement of their own explains, each with its
 * rationale. Not options (a test that needs another value drives the time instead).
 */
export const AATB_CONSTANTS = {
  /** After a 429, report early, but at most this often: one early report per dry spell, not per 429 (no measurement of its own). */
  throttleReportIntervalMs: 2_000,
  /** A lane with no attempt and no backlog for this long stops reporting (no measurement of its own). */
  idleAfterMs: 60_000,
  /** An aggregate older than this is ignored (telemetry is down: pure ATB); the aggregator's window and a half (no measurement of its own). */
  aggregateTtlMs: 90_000,
}

/** Every value AATB decides with: its options, resolved, and its internal constants. */
export type ResolvedAatbOptions = Required<Omit<AatbOptions, 'atb'>> & typeof AATB_CONSTANTS & { atb: AtbOptions }

export const AATB_DEFAULTS: Required<Omit<AatbOptions, 'atb'>> & { atb: AtbOptions } = {
  atb: {},
  reportWindowMs: 30_000,
  congestionHoldMs: 300_000,
  busyFraction: 0.8,
  idleFraction: 0.5,
  shareMargin: 0.97,
}

/** What stands behind each default (docs/algorithms.md's options table). All still absolute: see "Scale". */
export const AATB_OPTION_NOTES: Record<Exclude<keyof AatbOptions, 'atb'>, OptionNote> = {
  reportWindowMs: { scale: 'absolute', measured: 'the aggregator\'s window; telemetry costs 0.12–2.1 messages per request at it. Also the one given duration in the bound on an aggregate: before a lane has a spacing of its own, a hold is at most 3 report windows' },
  congestionHoldMs: { scale: 'absolute', measured: 'a 60 s hold let an overloaded fleet probe again and pay about one 429 per lane' },
  busyFraction: { scale: 'none', measured: 'stepped refill: 5-client fleets stopped keeping to their shares after 300 s (10–15 429s a run)' },
  idleFraction: { scale: 'none', measured: '0.3 left the sliding-window real-trace runs at 1.15–1.16 × UB; 0.5 at 1.115–1.125 ×' },
  shareMargin: { scale: 'none', measured: 'a fleet at exactly Q drains a stepped quota just before each step (a 429 per lane)' },
}

/**
 * Merge options over the defaults. An unknown option or a value that is not a finite number ≥ 0
 * throws a TypeError naming the option; the inner `atb` options are checked by `atb`'s rules.
 */
export function resolveAatbOptions(options: AatbOptions = {}): ResolvedAatbOptions {
  const o: ResolvedAatbOptions = { ...AATB_CONSTANTS, ...AATB_DEFAULTS, atb: options.atb ?? {} }
  checkKnownOptions('aatb', options, Object.keys(AATB_DEFAULTS))
  if (options.atb !== undefined && (options.atb === null || typeof options.atb !== 'object')) throw optionError('aatb', 'atb', 'an object of atb options', options.atb)
  for (const key of Object.keys(AATB_DEFAULTS) as (keyof AatbOptions)[]) {
    if (key === 'atb') continue
    const value = options[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw optionError('aatb', key, 'a finite number ≥ 0', value)
    o[key] = value
  }
  return o
}
