// Memoised signal reading for the grid. `readSignals` is pure and, for headers that
// carry only deltas (Retry-After seconds, RateLimit `t=`), translation-invariant in
// `now`: the same status and header values always give the same Signal with its times
// shifted by the change in `now`. A grid run sees the same few hundred header sets
// millions of times, so parsing each once and shifting the cached answer removes a
// quarter of the grid's time while every distinct response still goes through the
// real parser. Responses carrying absolute times (a `Date` header: the x-ratelimit
// dialect's epoch resets) are always parsed afresh.
import type { Signal } from '../core/types.js'
import { PairHeaders } from './header-source.js'
import type { SignalPath } from './run-simulation.js'

export type PairReader = (status: number, pairs: Array<[string, string]>, now: number) => Signal

const NO_PAIRS = new PairHeaders([])
const MAX_ENTRIES = 20_000

interface Entry {
  signal: Signal
  /** `now` the cached signal was read at. */
  at: number
}

/** Reads every response through `path.readSignals`. */
export function directReader(path: SignalPath): PairReader {
  const read = path.readSignals
  return (status, pairs, now) => read(status, pairs.length === 0 ? NO_PAIRS : new PairHeaders(pairs), now)
}

// One cache per signal path, shared by every run of the thread.
const caches = new WeakMap<SignalPath, PairReader>()

/** Reads each distinct (status, headers) once through `path.readSignals`, then shifts the cached times. */
export function memoizedReader(path: SignalPath): PairReader {
  let reader = caches.get(path)
  if (!reader) caches.set(path, (reader = createMemo(path)))
  return reader
}

function createMemo(path: SignalPath): PairReader {
  const direct = directReader(path)
  const cache = new Map<string, Entry>()
  return (status, pairs, now) => {
    let key = String(status)
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i]!
      if (pair[0].length === 4 && pair[0].toLowerCase() === 'date') return direct(status, pairs, now)
      key += `\n${pair[0]}:${pair[1]}`
    }
    const hit = cache.get(key)
    if (hit === undefined) {
      const signal = direct(status, pairs, now)
      if (cache.size >= MAX_ENTRIES) cache.clear()
      cache.set(key, { signal, at: now })
      return { ...signal }
    }
    const signal: Signal = { ...hit.signal }
    const shift = now - hit.at
    if (signal.retryAt !== undefined) signal.retryAt += shift
    if (signal.resetAt !== undefined) signal.resetAt += shift
    return signal
  }
}
