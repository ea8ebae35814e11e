// Options of the default AATB, with their defaults in one place.
import { checkKnownOptions, optionError } from './option-error.js'
import type { AtbOptions, OptionNote } from './atb-options.js'

export interface AatbOptions {
  /** Options of the inner default ATB, which does all pacing when no aggregate applies. */
  atb?: AtbOptions
  /**
   * Report period until the aggregator has told its window (every aggregate carries `windowMs`;
   * from the first one on, the lane reports once per aggregator window and this value is no
   * longer used). Set it to the telemetry endpoint's report window. Default 30 000 ms (the
   * aggregator's default window).
   */
  reportWindowMs?: number
  /**
   * A congested fleet whose attempts still come to at least this fraction of the quota rate
   * stays congested past the congestion hold (it would otherwise stop keeping to its shares
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
 * AATB's internal constants, each with its rationale. Counts, not durations: every time AATB
 * decides with is the aggregator's window or the lane's own traffic (aatb.ts, aatb-report.ts).
 */
export const AATB_CONSTANTS = {
  /**
   * After an aggregate reported a 429, the fleet counts as congested for this many of its periods:
   * the longer of the aggregator's window and the fair spacing it implies (1 / fair share). At the
   * paper's scale (27 clients on 80/min: 20 s spacing, 30 s window) that is the 300 s the earlier
   * fixed hold was; a 60 s hold let an overloaded fleet probe again and pay about one 429 per lane.
   */
  congestionHoldPeriods: 10,
  /** An aggregate is stale (telemetry down: pure ATB) once this many reports went out after it unanswered. */
  staleReports: 3,
}

/** Every value AATB decides with: its options, resolved, and its internal constants. */
export type ResolvedAatbOptions = Required<Omit<AatbOptions, 'atb'>> & typeof AATB_CONSTANTS & { atb: AtbOptions }

export const AATB_DEFAULTS: Required<Omit<AatbOptions, 'atb'>> & { atb: AtbOptions } = {
  atb: {},
  reportWindowMs: 30_000,
  busyFraction: 0.8,
  idleFraction: 0.5,
  shareMargin: 0.97,
}

/** What stands behind each default (docs/algorithms.md's options table). All still absolute: see "Scale". */
export const AATB_OPTION_NOTES: Record<Exclude<keyof AatbOptions, 'atb'>, OptionNote> = {
  reportWindowMs: { scale: 'absolute', measured: 'given: the aggregator\'s default window, used only until the first aggregate tells the window (then the report period, the congestion hold of 10 × max(window, fair spacing), the bound on a hold before the lane has a spacing of its own, 3 windows, are all the aggregator\'s window or the lane\'s traffic); staleness is 3 unanswered reports, idleness 2 aggregator windows without an attempt, early reports one per 429' },
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
