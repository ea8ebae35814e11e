// What a status says on its own. Without rate-limit fields the reader's answer depends on
// the status alone, and almost every response has none, so the shells share one frozen
// Signal per status instead of reading (and allocating) one per response.
import type { Signal } from '../types.js'
import { readSignals } from './read-signals.js'

const NO_FIELDS = { get: (): null => null }
const byStatus = new Map<number, Signal>()

/** `readSignals(status, <no headers>, now)`, shared and frozen for every valid HTTP status (100–999). */
export function statusSignal(status: number, now: number): Signal {
  if (!Number.isInteger(status) || status < 100 || status > 999) return readSignals(status, NO_FIELDS, now)
  let signal = byStatus.get(status)
  if (signal === undefined) {
    signal = Object.freeze(readSignals(status, NO_FIELDS, now))
    byStatus.set(status, signal)
  }
  return signal
}
