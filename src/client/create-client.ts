// The drop-in fetch: `client.fetch(input, init)` has the signature of the global
// fetch and resolves with the final Response (non-2xx included). Each call becomes a
// FetchJob in the lane of its scope; the limiter paces, retries and settles it.
import { sharedAbortController } from './shared-abort-controller.js'
import { RouteScopes } from '../core/scope.js'
import { createLimiter, type Limiter } from './create-limiter.js'
import { ClosedError } from './errors.js'
import { type FetchContext, FetchJob } from './fetch-job.js'
import type { FetchBody, FetchFunction, FetchInput } from './fetch-types.js'
import { HeaderSampling } from './header-sampling.js'
import { OriginCache } from './origin-cache.js'
import type { ScopeStats } from './lane.js'
import type { LimiterEventName, Listener } from './limiter-events.js'
import { checkClientOptionNames, type ClientOptions, type RequestDescriptor, resolveClientOptions } from './options.js'
import { snapshotBody, snapshotHeaders } from './init-snapshot.js'
import { isReplayableBody, readBounded } from './request-body.js'
import type { TelemetryStrategy } from './telemetry-strategies.js'

/** Per-request options, passed as `init.politeFetch`. */
export interface PoliteFetchInit {
  /**
   * Makes any body replayable: called once per attempt for a fresh body (e.g. a new stream
   * over the same file). Takes precedence over `init.body`. If it throws, the call rejects with
   * that error at once, never retried (`give-up` reason `body-factory-failed`).
   */
  body?: () => FetchBody | null
  /** Higher goes first among this scope's waiting calls. @default 0 */
  priority?: number
  /** Quota units each attempt costs. @default the client's `cost(request)`, else 1 */
  cost?: number
  /** Whole-call deadline for this request. @default the client's `deadlineMs` */
  deadlineMs?: number
  /** Maximum retries for this request. @default the client's `retryBudget` */
  retryBudget?: number
  /** Lane to use, bypassing the client's `scope` function and learned routes. */
  scope?: string
}

/** RequestInit plus `politeFetch`; any RequestInit is one, so `client.fetch` accepts what fetch accepts. */
export interface PoliteRequestInit extends RequestInit {
  politeFetch?: PoliteFetchInit
}

export interface Client {
  /** Same signature and result as the global fetch; paced and retried per scope. */
  fetch(input: FetchInput, init?: PoliteRequestInit): Promise<Response>
  stats(): ScopeStats[]
  on<E extends LimiterEventName>(event: E, listener: Listener<E>): () => void
  /**
   * Rejects waiting calls and calls in flight with `ClosedError`, writes pacer state to the store. An
   * attempt in flight is aborted when it has a signal of the limiter's (`timeoutMs`, or a shared
   * `limiter`); otherwise its request is abandoned, as at a deadline (fetch gets no signal the
   * client could abort). Over a shared `limiter`: ends this client's own calls and leaves it open.
   */
  close(): Promise<void>
}

/** RFC 9110 §9.2.2: methods whose repetition has the same effect as one request. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])

function isRequest(input: unknown): input is Request {
  // Duck-typed rather than instanceof: a Request from another realm or polyfill counts too.
  return (
    typeof input === 'object' &&
    input !== null &&
    typeof (input as Request).url === 'string' &&
    typeof (input as Request).method === 'string' &&
    typeof (input as Request).headers === 'object'
  )
}

/** Every member of RequestInit (and undici's `dispatcher`), as fetch reads them. */
const REQUEST_INIT_MEMBERS = [
  'method', 'headers', 'body', 'referrer', 'referrerPolicy', 'mode', 'credentials', 'cache', 'redirect',
  'integrity', 'keepalive', 'signal', 'duplex', 'priority', 'window', 'dispatcher', 'politeFetch',
] as const

/**
 * `init` as fetch reads it: a dictionary whose members may be inherited (a Request or a class
 * instance given as init, an `Object.create(defaults)`). The client copies init with a spread, which
 * sees own properties only: such an init lost its method and headers (a PUT went out as a bare GET).
 * Headers that can be read only once are read into a list (see isOneShot). A plain object, the
 * usual init, is returned as is.
 */
function asDictionary(init: PoliteRequestInit): PoliteRequestInit {
  if (typeof init !== 'object') return init
  let dictionary = init
  if (Object.getPrototypeOf(init) !== Object.prototype) {
    const copy: Record<string, unknown> = { ...init }
    for (const member of REQUEST_INIT_MEMBERS) {
      const value = (init as Record<string, unknown>)[member]
      // As WebIDL: a member whose value is undefined is absent.
      if (value !== undefined) copy[member] = value
    }
    dictionary = copy as PoliteRequestInit
  }
  const headers = dictionary.headers
  if (isOneShot(headers)) dictionary = { ...dictionary, headers: Array.from(headers, (pair) => Array.from(pair)) as [string, string][] }
  return dictionary
}

/**
 * Headers given as an iterable that is not a list or a Headers (a Map's `entries()`, a generator):
 * fetch reads it once, but the client reads it to look for an Idempotency-Key and hands it to every
 * attempt, so a POST went out without its headers and a retried GET's second attempt too. Such
 * headers are read once into a list of pairs.
 */
function isOneShot(headers: unknown): headers is Iterable<Iterable<string>> {
  return (
    typeof headers === 'object' &&
    headers !== null &&
    typeof (headers as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function' &&
    !Array.isArray(headers) &&
    !(typeof Headers === 'function' && headers instanceof Headers)
  )
}

/**
 * A call's own controller over a shared limiter (see `live` in createClient): aborted by close(),
 * and by the caller's signal until the call settles. It is its own listener, removed at the settle:
 * a caller's signal may live as long as the app, and a listener per call kept every call's
 * controller for good.
 */
class CallController extends AbortController {
  #caller: AbortSignal | undefined

  follow(caller: AbortSignal | undefined): void {
    this.#caller = caller
    caller?.addEventListener('abort', this)
  }

  unfollow(): void {
    this.#caller?.removeEventListener('abort', this)
    this.#caller = undefined
  }

  handleEvent(): void {
    const caller = this.#caller
    this.unfollow()
    this.abort(caller?.reason)
  }
}

function baseUrl(): string | undefined {
  const location = (globalThis as { location?: { href?: unknown } }).location
  return typeof location?.href === 'string' ? location.href : undefined
}

function headersOf(input: FetchInput, init: RequestInit | undefined): Headers {
  if (init?.headers !== undefined) return new Headers(init.headers)
  return isRequest(input) ? input.headers : new Headers()
}

/**
 * How a strategy starts its telemetry. It travels on the strategy (aatb() from the package
 * entry), so this module imports no telemetry code and a page on the default atb() ships none.
 */
function telemetryStarter(strategy: ClientOptions['strategy']): TelemetryStrategy['startTelemetry'] {
  const start = (strategy as Partial<TelemetryStrategy> | undefined)?.startTelemetry
  if (typeof start === 'function') return start
  const name = strategy === undefined ? 'none given (atb by default)' : `\`${strategy.name}\``
  throw new TypeError(`polite-fetch: option \`telemetry\` needs \`strategy: aatb()\` (or paperAatb()) from polite-fetch; strategy: ${name}`)
}

export function createClient(options: ClientOptions = {}): Client {
  const clientOptions = resolveClientOptions(options)
  checkClientOptionNames(options)
  // Checked before anything is built: a client that cannot start never leaves a limiter behind.
  const startTelemetry = options.telemetry === undefined ? undefined : telemetryStarter(options.strategy)
  // A shared limiter (e.g. the Node interceptor's) keeps one lane per quota across shells;
  // the client then does not own it and close() leaves it running.
  const limiter: Limiter = options.limiter ?? createLimiter(options)
  const routes = new RouteScopes(clientOptions.maxLearnedRoutes)
  const origins = new OriginCache()
  const initialFetch: FetchFunction | undefined = typeof globalThis.fetch === 'function' ? globalThis.fetch : undefined
  // Resolved through the clock the limiter uses, so signals and pacing share one time.
  const clock = options.clock
  const context: FetchContext = {
    underlying,
    now: clock === undefined ? Date.now : () => clock.now(),
    routes,
    learnRouteSplits: clientOptions.learnRouteSplits,
    headerSampling: new HeaderSampling(),
  }

  // Aborted by close(), to end calls still reading their Request body (they are not in a lane yet).
  // Only when the client owns its limiter: a shared one keeps serving after this client closes.
  const closing = options.limiter === undefined ? sharedAbortController() : undefined
  // Over a shared limiter (which close() leaves open) each call gets a signal of its own, kept
  // here until the call settles, which close() aborts: the call leaves its lane (waiting for a
  // retry behind a 20 s Retry-After, it settled 20 s after close() and then sent again) and its
  // attempt in flight is aborted. The caller's signal still aborts it, with the caller's reason.
  const live = options.limiter === undefined ? undefined : new Set<CallController>()
  let closed = false

  const telemetry =
    startTelemetry === undefined || options.telemetry === undefined
      ? undefined
      : startTelemetry(options.telemetry, limiter, context.now, (input, init) => underlying()(input, init))

  function underlying(): FetchFunction {
    const chosen = clientOptions.fetch ?? globalThis.fetch
    // Someone replaced the global fetch with this client's fetch: use the one that was there.
    if (chosen === politeFetch && initialFetch !== undefined) return initialFetch
    if (typeof chosen !== 'function') throw new TypeError('polite-fetch: no fetch implementation available')
    // A given fetch is typed loosely (see FetchImplementation); it is called and read as fetch.
    return chosen as FetchFunction
  }

  function politeFetch(input: FetchInput, init?: PoliteRequestInit): Promise<Response> {
    let job: FetchJob | Promise<FetchJob> | undefined
    // Over a shared limiter: the call's own controller (see `live`), made here so that no state
    // is shared with prepare(), which runs the caller's code (scope, cost, toString) and may re-enter.
    const own = live === undefined ? undefined : new CallController()
    try {
      job = prepare(input, init === null || init === undefined ? undefined : asDictionary(init), own)
      if (job === undefined) return underlying()(input, init)
    } catch (error) {
      if (own !== undefined) unlink(own)
      return Promise.reject(error)
    }
    const result = job instanceof FetchJob ? limiter.run(job) : job.then((ready) => limiter.run(ready))
    if (own === undefined || !live?.has(own)) return result
    return result.finally(() => unlink(own))
  }

  /** Gives the job the signal of `own`, which the caller's signal and close() abort (see `live`). */
  function link(job: FetchJob, own: CallController, calls: Set<CallController>): void {
    if (closed) throw new ClosedError('polite-fetch: the client was closed', { request: job.label })
    const caller = job.signal
    if (caller?.aborted === true) return // rejected with its reason as it enters the limiter
    own.follow(caller)
    job.signal = own.signal
    calls.add(own)
  }

  /** The call settled: `own` no longer follows the caller (the body's fetch does, through its relay). */
  function unlink(own: CallController): void {
    own.unfollow()
    live?.delete(own)
  }

  /** The job for a call, a promise of it when a Request body must be read first, or undefined to pass through. */
  function prepare(input: FetchInput, init: PoliteRequestInit | undefined, own: CallController | undefined): FetchJob | Promise<FetchJob> | undefined {
    const request = isRequest(input) ? input : undefined
    const href = request !== undefined ? request.url : typeof input === 'string' ? input : String(input)
    // The hot path needs only the origin (the lane): a cached one for a plain absolute
    // http(s) URL; the full parse for anything else, or when a scope/cost option wants the URL.
    let url: URL | undefined
    let origin = clientOptions.scope === undefined && clientOptions.cost === undefined ? origins.originOf(href) : undefined
    if (origin === null) return undefined // let fetch raise its own TypeError for the bad URL
    if (origin === undefined) {
      try {
        url = new URL(href, baseUrl())
      } catch {
        return undefined
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined // data:, blob:, file: have no quota
      origin = url.origin
    }
    const method = init?.method === undefined && request === undefined ? 'GET' : String(init?.method ?? request?.method ?? 'GET').toUpperCase()
    const polite = init?.politeFetch
    // The URL as it is now, not the caller's URL object: fetch reads it once, at the call, and a
    // caller may reuse the object (url.searchParams.set per page); a retry, or a call sent from the
    // queue, went out with the object's later URL and answered with another page's data.
    const job = new FetchJob(context, request ?? href, method, origin, url?.pathname, url?.href ?? href)
    job.signal =
      init !== undefined && 'signal' in init ? (init.signal ?? undefined) : request !== undefined ? request.signal : undefined
    job.callerSignal = job.signal
    if (own !== undefined && live !== undefined) link(job, own, live)

    // Built only when something needs the headers (scope/cost options, a non-idempotent method).
    let descriptor: RequestDescriptor | undefined
    if (typeof polite?.scope === 'string') job.scope = polite.scope
    else if (clientOptions.scope !== undefined) {
      descriptor = { url: url as URL, method, headers: headersOf(input, init) }
      job.scope = String(clientOptions.scope(descriptor))
    } else {
      job.scope = routes.size === 0 ? origin : routes.scopeFor(method, origin, job.pathname)
      job.learn = true
    }
    let cost = polite?.cost
    if (cost === undefined && clientOptions.cost !== undefined) {
      descriptor ??= { url: url as URL, method, headers: headersOf(input, init) }
      cost = clientOptions.cost(descriptor)
    }
    job.cost = typeof cost !== 'number' || !(cost >= 0) || !Number.isFinite(cost) ? 1 : cost

    let attemptInit: (RequestInit & { politeFetch?: unknown; duplex?: string }) | undefined
    if (init !== undefined) {
      attemptInit = { ...init }
      // As it is now: the attempts may go out later (init-snapshot.ts).
      if (init.headers !== undefined && init.headers !== null) attemptInit.headers = snapshotHeaders(init.headers)
      if (polite !== undefined) delete attemptInit.politeFetch
    }
    job.init = attemptInit
    let pendingRead: ReturnType<typeof readBounded> | undefined
    if (typeof polite?.body === 'function') job.body = { kind: 'factory', factory: polite.body }
    else if (init?.body !== undefined && init.body !== null) {
      job.body = isReplayableBody(init.body) ? { kind: 'value', value: snapshotBody(init.body) } : { kind: 'once', value: init.body }
    } else if (request !== undefined && request.body !== null) {
      // init.body null/undefined means "the Request's own body", as in fetch.
      if (request.bodyUsed) throw new TypeError('polite-fetch: the Request body has already been used')
      pendingRead = readBounded(request.body, clientOptions.maxBodyBytes, [job.signal, closing?.signal])
    }

    const idempotent =
      IDEMPOTENT_METHODS.has(method) || (descriptor?.headers ?? headersOf(input, init)).has('idempotency-key')
    job.retryErrors = idempotent && job.body.kind !== 'once'
    job.priority = polite?.priority
    job.deadlineMs = polite?.deadlineMs
    job.retryBudget = polite?.retryBudget
    job.giveUp = clientOptions.giveUp
    if (pendingRead === undefined) return job
    return pendingRead.then((read) => {
      if (read.replayable) {
        job.body = { kind: 'value', value: read.bytes as FetchBody }
      } else {
        job.init = { ...attemptInit, duplex: 'half' } // required by fetch for a stream body
        job.body = { kind: 'once', value: read.stream as FetchBody }
        job.retryErrors = false
      }
      return job
    })
  }

  return {
    fetch: politeFetch,
    stats: () => limiter.stats(),
    on: (event, listener) => limiter.on(event, listener),
    close: () => {
      telemetry?.stop()
      closed = true
      closing?.abort(new ClosedError('polite-fetch: the limiter was closed'))
      if (live !== undefined) {
        for (const own of [...live]) own.abort(new ClosedError('polite-fetch: the client was closed'))
        live.clear()
      }
      return options.limiter === undefined ? limiter.close() : Promise.resolve()
    },
  }
}
