// Helpers for resuming pacers from persisted state. State comes from storage that
// another SDK version, a clock jump or a hostile page may have written: every field
// is checked, and anything implausible makes the pacer start fresh rather than stall.
import type { PacerState } from '../types.js'

/** The state, if it was written by `kind` at `version`; otherwise undefined. */
export function matchingState(state: PacerState | undefined, kind: string, version: number): PacerState | undefined {
  if (state === null || typeof state !== 'object') return undefined
  if (state.kind !== kind || state.version !== version) return undefined
  return state
}

/** A finite number in [min, max], or undefined. */
export function finiteIn(value: unknown, min: number, max: number): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined
  return value >= min && value <= max ? value : undefined
}

/** A timestamp not after `now` (a state saved "in the future" would freeze refills or gates). */
export function pastTime(value: unknown, now: number): number | undefined {
  return finiteIn(value, 0, now)
}

/** A list of timestamps, each not after `now`, sorted, at most `maxLength` (the newest kept). */
export function pastTimes(value: unknown, now: number, maxLength: number): number[] | undefined {
  if (!Array.isArray(value)) return undefined
  const times: number[] = []
  for (const item of value) {
    const time = pastTime(item, now)
    if (time === undefined) return undefined
    times.push(time)
  }
  times.sort((a, b) => a - b)
  return times.slice(Math.max(0, times.length - maxLength))
}

/**
 * Round to `decimals` places like the paper's Python code (`round(x, 2)`): both round the
 * exact binary value, so they agree except on exact binary halves (0.125 → 0.13 here,
 * 0.12 in Python), which the paper's rates and sleeps practically never hit.
 */
export function roundTo(value: number, decimals: number): number {
  return Number(value.toFixed(decimals))
}
