// One fetch call as a limiter Job: how to send each attempt (same input, a fresh or
// replayed body, the attempt's signal) and how to read its response into a Signal.
// A class, so the per-call state lives in one object and the methods are shared. It is
// a callback-style job (`start`): the limiter hears of the response straight from the
// fetch promise, without an async frame per attempt in between.
import { INVALID_REQUEST } from '../core/retry-policy.js'
import { laneRoute } from '../core/route-split.js'
import type { RouteScopes } from '../core/scope.js'
import { statusSignal } from '../core/signals/index.js'
import type { Signal } from '../core/types.js'
import type { FetchBody, FetchFunction, FetchInput } from './fetch-types.js'
import type { HeaderSampling } from './header-sampling.js'
import { giveUpFields } from './give-up-header.js'
import type { AttemptOutcome, AttemptReport, GiveUpMode, Job } from './limiter-types.js'
import { responseSignal } from './response-signal.js'
import { SignalRelay } from './signal-relay.js'
import { noop } from './timer.js'

export { PACED_HEADER, PACED_HEADER_VALUE } from './response-signal.js'

export type { FetchFunction } from './fetch-types.js'

/** What every job of one client shares. */
export interface FetchContext {
  underlying(): FetchFunction
  now(): number
  routes: RouteScopes
  /** The client's `learnRouteSplits` option. */
  learnRouteSplits: boolean
  /** Which 2xx responses have their header fields read. */
  headerSampling: HeaderSampling
}

/** How an attempt's body is produced. */
export type BodySource =
  | { kind: 'none' }
  /** Handed to fetch as is on every attempt. */
  | { kind: 'value'; value: FetchBody }
  /** Called once per attempt (the caller's `politeFetch.body`). */
  | { kind: 'factory'; factory: () => FetchBody | null }
  /** A stream: sent by the first attempt only. */
  | { kind: 'once'; value: FetchBody }

const NO_BODY: BodySource = { kind: 'none' }


/** Give-up reason of a call whose `politeFetch.body()` threw: nothing was sent. */
export const BODY_FACTORY_FAILED = 'body-factory-failed'

/** Give-up reason of a failure fetch itself decided (a refused redirect, a blocked port): another attempt gets the same. */
export const FETCH_REFUSED = 'fetch-refused'

/**
 * The network errors of Node's fetch (undici: `TypeError('fetch failed')` whose cause names the
 * step) that come from the fetch algorithm, not the network: `redirect: 'error'` meeting a
 * redirect, a redirect loop (20 followed), a redirect to a non-HTTP(S) URL, a port on fetch's
 * bad-port list. Retried like a dropped connection, a GET went out 18 times over 60 s before its
 * DeadlineError where plain fetch rejects once. A browser names no cause: there such a failure
 * is still retried as a network error.
 */
const FETCH_DECISIONS: ReadonlySet<string> = new Set([
  'unexpected redirect',
  'redirect count exceeded',
  'URL scheme must be a HTTP(S) scheme',
  'bad port',
])

function refusedByFetch(error: TypeError): boolean {
  const cause = (error as { cause?: unknown }).cause
  return cause instanceof Error && FETCH_DECISIONS.has(cause.message)
}

/** The signal of an opaque response (status 0): an answer the server gave, whatever it was. */
const OPAQUE_ANSWER: Signal = Object.freeze({ kind: 'ok', status: 0 }) as Signal

/** The signal of a response our service worker already paced (not fed to the pacer). */
function pacedUpstream(status: number): Signal {
  return { kind: 'ok', status }
}

function discardResponse(this: AttemptOutcome<Response>): void {
  const body = this.value.body
  if (body !== null && !body.locked) body.cancel().catch(noop)
}

/** The response handed back after a give-up (`giveUp: 'response'`): same status and headers plus the mark. */
function gaveUpResponse(this: AttemptOutcome<Response>, reason: string, retryAt: number | undefined, copy = false): Response {
  const response = this.value
  const headers = new Headers(response.headers)
  for (const [name, value] of giveUpFields(reason, retryAt)) headers.set(name, value)
  // A copy (for another call) never takes the body; a response discarded for a retry the call
  // then never made has lost it.
  const body = copy || response.bodyUsed || response.body?.locked === true ? null : response.body
  return new Response(body, { status: response.status, statusText: response.statusText, headers })
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
;(FetchOutcome.prototype as AttemptOutcome<Response>).gaveUp = gaveUpResponse

export class FetchJob implements Job<Response> {
  scope = ''
  cost = 1
  signal: AbortSignal | undefined = undefined
  /** The caller's own signal; `signal` may be one of the client's that follows it (over a shared limiter). */
  callerSignal: AbortSignal | undefined = undefined
  retryErrors = false
  priority: number | undefined = undefined
  deadlineMs: number | undefined = undefined
  retryBudget: number | undefined = undefined
  giveUp: GiveUpMode | undefined = undefined
  readonly optionalAttemptSignal = true
  /** The init handed to every attempt (a private copy: the job sets `signal` and `body` on it); none for a bare call. */
  init: (RequestInit & { duplex?: string }) | undefined = undefined
  body: BodySource = NO_BODY
  /** Whether responses may teach the client this route's policy (not when the caller chose the scope). */
  learn = false
  readonly context: FetchContext
  readonly input: FetchInput
  readonly method: string
  readonly origin: string
  #pathname: string | undefined
  readonly #href: string
  #route: string | undefined
  /** What the body factory threw (boxed: a factory may throw undefined), when it did. */
  #bodyFailure: { error: unknown } | undefined = undefined

  /**
   * The request-level facts; the rest are set by the client as it learns them. Positional,
   * not an options object: one allocation per call fewer on the hot path.
   * @param pathname the path when the URL was parsed; otherwise read from `href` on first use
   * @param href the absolute URL, for `pathname` when it was not parsed
   */
  constructor(context: FetchContext, input: FetchInput, method: string, origin: string, pathname: string | undefined, href: string) {
    this.context = context
    this.input = input
    this.method = method
    this.origin = origin
    this.#pathname = pathname
    this.#href = href
  }

  get pathname(): string {
    return (this.#pathname ??= new URL(this.#href).pathname)
  }

  /**
   * Method + path template, for learning route splits from status codes: only while the job is
   * in its origin's lane by default (not a caller-chosen scope, not a policy's lane). Read by
   * the limiter only once the lane has seen a 429.
   */
  get route(): string | undefined {
    if (!this.learn || this.scope !== this.origin || !this.context.learnRouteSplits) return undefined
    return (this.#route ??= laneRoute(this.method, this.pathname))
  }

  /** The limiter gave this route a lane of its own: later requests of the route go to `origin#policy`. */
  learnRoute(policy: string): void {
    this.context.routes.learn(this.method, this.origin, this.pathname, policy)
  }

  /** Method, origin and path, never the query string (it may carry credentials). Built only when read. */
  get label(): string {
    return `${this.method} ${this.origin}${this.pathname}`
  }

  start(attemptSignal: AbortSignal | undefined, attemptNumber: number, report: AttemptReport<Response>): void {
    let pending: Promise<Response>
    // The attempt's signal is the limiter's, not the caller's: fetch follows both (signal-relay.ts).
    const caller = this.callerSignal
    const relay = attemptSignal === undefined || caller === undefined || caller === attemptSignal ? undefined : new SignalRelay(attemptSignal, caller)
    try {
      pending = this.context.underlying()(this.input, this.#attemptInit(relay?.signal ?? attemptSignal, attemptNumber))
    } catch (error) {
      relay?.release()
      report.failed(error)
      return
    }
    pending.then(
      (response) => {
        relay?.holdFor(response)
        let outcome: FetchOutcome
        try {
          outcome = this.#outcome(response)
        } catch (error) {
          report.failed(error)
          return
        }
        report.done(outcome)
      },
      (error: unknown) => {
        relay?.release()
        report.failed(error)
      },
    )
  }

  /**
   * fetch rejects both a network failure and an invalid request (a bad header name, a forbidden
   * method) with a TypeError. Building the same request again tells them apart: if that throws,
   * no attempt can succeed and the caller gets the error now.
   */
  finalFailure(error: unknown): string | undefined {
    // The caller's code failed before anything was sent: as an idempotent request's network
    // error, a PUT whose factory threw was retried (factory and all) until its deadline.
    if (this.#bodyFailure !== undefined && this.#bodyFailure.error === error) return BODY_FACTORY_FAILED
    if (!(error instanceof TypeError)) return undefined
    if (refusedByFetch(error)) return FETCH_REFUSED
    const body = this.body.kind === 'value' ? this.body.value : undefined
    try {
      // The URL, not a Request input: a Request was checked when it was built, and its body may be used.
      new Request(this.#href, { ...this.init, method: this.method, signal: undefined, body })
    } catch {
      return INVALID_REQUEST
    }
    return undefined
  }

  attempt(attemptSignal: AbortSignal | undefined, attemptNumber: number): Promise<AttemptOutcome<Response>> {
    return new Promise((resolve, reject) => this.start(attemptSignal, attemptNumber, { done: resolve, failed: reject }))
  }

  #attemptInit(attemptSignal: AbortSignal | undefined, attemptNumber: number): RequestInit | undefined {
    const body = this.body
    // No init at all for a plain `client.fetch(url)`: fetch does the least work then.
    let init = this.init
    if (init === undefined && (attemptSignal !== undefined || body.kind !== 'none')) init = this.init = {}
    if (init !== undefined) {
      // undefined when nothing but the caller could abort: fetch then gets the caller's init as
      // is, no signal (a Request's own `signal` still applies, as with plain fetch) or the caller's
      // `signal: null`, which frees the call from its Request's signal (replaced by undefined, an
      // aborted Request signal failed every attempt until the deadline).
      if (attemptSignal !== undefined) init.signal = attemptSignal
      if (body.kind === 'value') init.body = body.value
      else if (body.kind === 'factory') init.body = this.#produceBody(body.factory)
      else if (body.kind === 'once') {
        if (attemptNumber > 1) throw new TypeError('polite-fetch: a streamed body cannot be sent twice')
        init.body = body.value
      }
    }
    return init
  }

  /** The caller's `politeFetch.body()` for this attempt; what it throws is remembered for `finalFailure`. */
  #produceBody(factory: () => FetchBody | null): FetchBody | null {
    try {
      return factory()
    } catch (error) {
      this.#bodyFailure = { error }
      throw error
    }
  }

  #outcome(response: Response): FetchOutcome {
    const status = response.status
    const context = this.context
    // fetch resolves with status 0 only for a filtered response (`redirect: 'manual'`'s opaque
    // redirect, a `no-cors` answer): the server answered, it only hides what. Final, as in fetch;
    // read as a status-0 failure it was retried until the deadline.
    if (status === 0) return new FetchOutcome(OPAQUE_ANSWER, response, true, false)
    if (!context.headerSampling.shouldRead(this.origin, status)) {
      return new FetchOutcome(statusSignal(status, context.now()), response, this.body.kind !== 'once', false)
    }
    const signal = responseSignal(status, response.headers, context.now(), context.headerSampling, this.origin)
    if (signal === undefined) return new FetchOutcome(pacedUpstream(status), response, false, true)
    if (this.learn && signal.policy !== undefined) this.context.routes.learn(this.method, this.origin, this.pathname, signal.policy)
    return new FetchOutcome(signal, response, this.body.kind !== 'once', false)
  }
}
