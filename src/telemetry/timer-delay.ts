// A user's duration as a timer can take it. Beyond 2^31-1 ms (about 24.8 days; Infinity
// included) Node and browsers fire a setTimeout after 1 ms instead: `timeoutMs: Infinity`
// failed every report as a timeout 1 ms after sending it, and `tickMs: Infinity` ticked
// every millisecond. Such a value is held to the longest delay a timer honours; one that is
// not a positive number gets the default.
import { MAX_TIMEOUT_MS } from '../core/types.js'

export function timerDelayMs(value: number | undefined, defaultMs: number): number {
  if (typeof value !== 'number' || !(value > 0)) return defaultMs
  return Math.min(value, MAX_TIMEOUT_MS)
}
