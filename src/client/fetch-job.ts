// One fetch call as a limiter Job: how to send each attempt (same input, a fresh or
// replayed body, the attempt's signal) and how to read its response into a Signal.
// A class, so the per-call state lives in one object and the methods are shared.
import type { RouteScopes } from '../core/scope.js'
import { readSignals } from '../core/signals/index.js'
import type { Signal } from '../core/types.js'
import type { AttemptOutcome, Job } from './limiter-types.js'

/** Header our service worker sets on responses it already paced: page-side clients must not pace or retry them again. */
export const PACED_HEADER = 'x-polite-fetch'
/** Value of `PACED_HEADER` on such responses. */
export const PACED_HEADER_VALUE = 'paced'

export type FetchFunction = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>

/** What every job of one client shares. */
export interface FetchContext {
  underlying(): FetchFunction
  now(): number
  routes: RouteScopes
}

/** How an attempt's body is produced. */
export type BodySource =
  | { kind: 'none' }
  /** Handed to fetch as is on every attempt. */
  | { kind: 'value'; value: BodyInit }
  /** Called once per attempt (the caller's `politeFetch.body`). */
  | { kind: 'factory'; factory: () => BodyInit | null }
  /** A stream: sent by the first attempt only. */
  | { kind: 'once'; value: BodyInit }

function discardResponse(this: AttemptOutcome<Response>): void {
  const body = this.value.body
  if (body !== null && !body.locked) body.cancel().catch(() => {})
}

class FetchOutcome implements AttemptOutcome<Response> {
  readonly signal: Signal
  readonly value: Response
  readonly retryable: boolean
  readonly reason: string | undefined
  readonly neutral: boolean
  constructor(signal: Signal, value: Response, retryable: boolean, neutral: boolean) {
    this.signal = signal
    this.value = value
    this.retryable = retryable
    this.reason = retryable ? undefined : neutral ? 'paced-upstream' : 'body-not-replayable'
    this.neutral = neutral
  }
}
;(FetchOutcome.prototype as AttemptOutcome<Response>).discard = discardResponse

export interface FetchJobInit {
  context: FetchContext
  input: RequestInfo | URL
  /** The init handed to every attempt (a private copy: the job sets `signal` and `body` on it); none for a bare call. */
  init: (RequestInit & { duplex?: string }) | undefined
  body: BodySource
  scope: string
  cost: number
  signal: AbortSignal | undefined
  method: string
  origin: string
  pathname: string
  /** Whether responses may teach the client this route's policy (not when the caller chose the scope). */
  learn: boolean
  retryErrors: boolean
  priority: number | undefined
  deadlineMs: number | undefined
  retryBudget: number | undefined
}

export class FetchJob implements Job<Response> {
  readonly scope: string
  readonly cost: number
  readonly signal: AbortSignal | undefined
  readonly retryErrors: boolean
  readonly priority: number | undefined
  readonly deadlineMs: number | undefined
  readonly retryBudget: number | undefined
  readonly optionalAttemptSignal = true
  readonly #p: FetchJobInit

  constructor(init: FetchJobInit) {
    this.#p = init
    this.scope = init.scope
    this.cost = init.cost
    this.signal = init.signal
    this.retryErrors = init.retryErrors
    this.priority = init.priority
    this.deadlineMs = init.deadlineMs
    this.retryBudget = init.retryBudget
  }

  /** Method, origin and path, never the query string (it may carry credentials). Built only when read. */
  get label(): string {
    const p = this.#p
    return `${p.method} ${p.origin}${p.pathname}`
  }

  async attempt(attemptSignal: AbortSignal | undefined, attemptNumber: number): Promise<AttemptOutcome<Response>> {
    const p = this.#p
    const body = p.body
    // No init at all for a plain `client.fetch(url)`: fetch does the least work then.
    let init = p.init
    if (init === undefined && (attemptSignal !== undefined || body.kind !== 'none')) init = p.init = {}
    if (init !== undefined) {
      // undefined when nothing but the caller could abort: fetch then gets no signal at all
      // (a Request's own `signal` still applies, as with plain fetch).
      if (attemptSignal !== undefined || init.signal !== undefined) init.signal = attemptSignal
      if (body.kind === 'value') init.body = body.value
      else if (body.kind === 'factory') init.body = body.factory()
      else if (body.kind === 'once') {
        if (attemptNumber > 1) throw new TypeError('polite-fetch: a streamed body cannot be sent twice')
        init.body = body.value
      }
    }
    const response = await p.context.underlying()(p.input, init)
    const headers = response.headers
    if (headers.get(PACED_HEADER) === PACED_HEADER_VALUE) {
      return new FetchOutcome({ kind: 'ok', status: response.status }, response, false, true)
    }
    const signal = readSignals(response.status, headers, p.context.now())
    if (p.learn && signal.policy !== undefined) p.context.routes.learn(p.method, p.origin, p.pathname, signal.policy)
    return new FetchOutcome(signal, response, body.kind !== 'once', false)
  }
}
