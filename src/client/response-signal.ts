// What a response tells the lane, with one cheap look at its header NAMES. Against a
// real undici fetch, reading the headers was the client's largest cost after URL
// parsing: every `Headers.get` pays a brand check, name validation and lower-casing,
// and `Headers.forEach` (which `readSignals` uses to find the fields it understands)
// builds a sorted [name, value] pair per field plus an iterator result per step.
// Iterating `keys()` builds neither pairs nor callbacks. Almost every response has no
// field the reader understands and no "already paced" mark; only when a name says
// otherwise is the response read the full way, from the Headers themselves, so the
// reader sees exactly what it always saw (a RateLimit or X-RateLimit field on a 200
// still steers the rate).
import { readSignals, statusSignal } from '../core/signals/index.js'
import { isSignalField } from '../core/signals/signal-fields.js'
import type { Signal } from '../core/types.js'

/** Header our service worker sets on responses it already paced: page-side clients must not pace or retry them again. */
export const PACED_HEADER = 'x-polite-fetch'
/** Value of `PACED_HEADER` on such responses. */
export const PACED_HEADER_VALUE = 'paced'

/** What a response's headers offer: a WHATWG `Headers` has both. */
export interface ResponseHeaders {
  get(name: string): string | null
  keys?(): Iterable<unknown>
}

// What the names say, as bits.
/** Nothing the reader or the paced check looks at. */
const NONE = 0
/** Our service worker's mark. */
const PACED = 1
/** At least one field the signal reader understands. */
const SIGNAL = 2
/** The names could not be listed. */
const UNKNOWN = 4

function classifyNames(headers: ResponseHeaders): number {
  if (typeof headers.keys !== 'function') return UNKNOWN
  let found = NONE
  try {
    for (const name of headers.keys()) {
      if (typeof name !== 'string') continue
      // Every name of interest starts with a, b, r or x (retry-after*, ratelimit*,
      // beta-ratelimit*, x-ratelimit*, anthropic-ratelimit*, x-polite-fetch, …): skip the rest unread.
      const first = name.charCodeAt(0) | 0x20
      if (first !== 97 && first !== 98 && first !== 114 && first !== 120) continue
      const lower = name.toLowerCase()
      if (lower === PACED_HEADER) found |= PACED
      else if (isSignalField(lower)) found |= SIGNAL
    }
  } catch {
    return UNKNOWN
  }
  return found
}

/** Told when a response's names include a field worth reading (see HeaderSampling). */
export interface FieldsSeen {
  sawFields(origin: string): void
}

/**
 * The response's Signal for the pacer, or `undefined` when our service worker already
 * paced it (then it is final and teaches this lane nothing). `seen`, when given, hears
 * of `origin` whenever the names hold something to read.
 */
export function responseSignal(
  status: number,
  headers: ResponseHeaders,
  now: number,
  seen?: FieldsSeen,
  origin = '',
): Signal | undefined {
  const names = classifyNames(headers)
  if (names === NONE) return statusSignal(status, now)
  seen?.sawFields(origin)
  if (names !== SIGNAL && headers.get(PACED_HEADER) === PACED_HEADER_VALUE) return undefined
  return readSignals(status, headers, now)
}
