// The per-call options of a page's call (`init.politeFetch`), carried to the polite-fetch
// service worker in a request header. In worker mode the page's call reaches the worker as a
// plain request: without this every per-call option was dropped, and a call with
// `deadlineMs: 5000` waited for the worker's deadline where the in-page client gave up at 5 s.
//
// The worker hands what it reads to its own client as `init.politeFetch`, so the client's own
// rules apply to each value (create-client.ts, create-limiter.ts: a negative deadline is the
// default, a cost that is no finite number >= 0 costs 1, …), exactly as in the page. What this
// file adds is the wire: only the options that serialise, each read back only in the form the
// page writes, so a forged header gives a call nothing a page's own `politeFetch` could not.

/**
 * Request header with a page call's per-call options, as `application/x-www-form-urlencoded`
 * (ASCII whatever the scope holds). The worker removes it before the request goes on; a page sets
 * it only for a worker that says it does (`features: ['call-options']`).
 */
export const CALL_OPTIONS_HEADER = 'x-polite-fetch-options'

/** The per-call options that can travel: `body`, a function, cannot (the page calls it itself). */
export interface CallOptions {
  priority?: number
  cost?: number
  deadlineMs?: number
  retryBudget?: number
  scope?: string
}

const NUMBER_OPTIONS = ['priority', 'cost', 'deadlineMs', 'retryBudget'] as const

/** The header's value for a call's `politeFetch`, or undefined when there is nothing to carry. */
export function writeCallOptions(politeFetch: unknown): string | undefined {
  if (typeof politeFetch !== 'object' || politeFetch === null) return undefined
  const options = politeFetch as Record<string, unknown>
  const params = new URLSearchParams()
  for (const name of NUMBER_OPTIONS) {
    const value = options[name]
    if (typeof value === 'number') params.set(name, String(value))
    // The client reads a given cost that is no number as invalid (cost 1), not as absent (its
    // `cost()`): NaN says that. A wrong type elsewhere reads as absent there and here alike.
    else if (name === 'cost' && value !== undefined) params.set(name, 'NaN')
  }
  const scope = options['scope']
  if (typeof scope === 'string') params.set('scope', scope)
  const value = params.toString()
  return value === '' ? undefined : value
}

/** One value the page wrote once; a key given twice is a forgery that says two things. */
function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name)
  return values.length === 1 ? values[0] : undefined
}

/**
 * The options in a header's value; undefined when it carries none. A number counts only as
 * `String(number)` writes it (Infinity and NaN included): no blanks, hex or exponents a page never
 * writes. Unknown keys are ignored.
 */
export function readCallOptions(value: string | null): CallOptions | undefined {
  if (value === null || value === '') return undefined
  const params = new URLSearchParams(value)
  const options: CallOptions = {}
  let found = false
  for (const name of NUMBER_OPTIONS) {
    const text = single(params, name)
    if (text === undefined) continue
    const number = Number(text)
    if (String(number) !== text) continue
    options[name] = number
    found = true
  }
  const scope = single(params, 'scope')
  if (scope !== undefined) {
    options.scope = scope
    found = true
  }
  return found ? options : undefined
}
