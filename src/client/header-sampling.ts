// Which successful responses the fetch shell reads the header fields of. Listing a
// WHATWG `Headers` is the dearest thing the shell does per response: against Node 20's
// fetch on loopback, one walk of `headers.keys()` costs about 6 µs of client CPU
// (undici sorts the field list and builds a pair per field before the first name comes
// out), more than the lane, the limiter and the pacer together; a `get` per name the
// reader knows costs more. Servers send their rate-limit fields on every response or on
// none, so per origin:
//  - every response that is not a 2xx is read (a 429's Retry-After, a 503, a 403 quota);
//  - the first responses of an origin are read, and once one of them carried a field
//    the reader understands (or our service worker's mark), every response after it;
//  - an origin that has sent none so far has one 2xx in `READ_ONE_IN` read: a server
//    that starts sending fields later is noticed within that many responses.
// A 2xx that is not read is the status alone to the pacer, as a response without
// fields would have been.

/** Responses of a new origin read in full whatever they carry. */
export const READ_FIRST_RESPONSES = 16
/**
 * Past those, one 2xx in this many is read while the origin has sent no field. 32: a
 * read costs about 6 µs, so this is 0.2 µs per response on average, and a server that
 * starts sending fields is noticed within 32 responses (every 429 is read anyway).
 */
export const READ_ONE_IN = 32
/** Origins remembered; past this the memory starts over (a client talks to few hosts). */
export const MAX_SAMPLED_ORIGINS = 256

/** One origin's state. Mutated in place: no `Map.set` per response. */
interface OriginSampling {
  /** 2xx responses seen while the origin sent no field. */
  count: number
  /** A response carried a field worth reading: read every one from now on. */
  fieldsSeen: boolean
}

export class HeaderSampling {
  readonly #origins = new Map<string, OriginSampling>()

  /** Whether to read the fields of this response (otherwise its status is its signal). */
  shouldRead(origin: string, status: number): boolean {
    if (status < 200 || status > 299) return true
    const state = this.#origins.get(origin) ?? this.#add(origin)
    if (state.fieldsSeen) return true
    const count = state.count++
    return count < READ_FIRST_RESPONSES || (count - READ_FIRST_RESPONSES) % READ_ONE_IN === READ_ONE_IN - 1
  }

  /** A response of `origin` carried a field worth reading: from now on read every one. */
  sawFields(origin: string): void {
    ;(this.#origins.get(origin) ?? this.#add(origin)).fieldsSeen = true
  }

  #add(origin: string): OriginSampling {
    if (this.#origins.size >= MAX_SAMPLED_ORIGINS) this.#origins.clear()
    const state: OriginSampling = { count: 0, fieldsSeen: false }
    this.#origins.set(origin, state)
    return state
  }
}
