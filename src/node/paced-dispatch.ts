// One caller dispatch as it goes through the limiter: what the caller's handler holds
// to abort (and, for the controller API, pause / resume), the limiter job whose
// attempts are real undici dispatches, and exactly-once settlement of the caller's handler.
//
// The caller's handler is spoken to in the API that costs it least. `request`,
// `fetch`, `stream` and `pipeline` pass undici callback-style ("legacy") handlers,
// which `Dispatcher.compose` wraps in a `WrapHandler` that offers BOTH APIs: through
// its callback side the raw headers reach them untouched. Only a handler that speaks
// the controller API alone gets a parsed header record.
import type { Dispatcher } from 'undici'
import { errors } from 'undici'
import { PoliteFetchError } from '../client/errors.js'
import type { AttemptOutcome, AttemptReport, Job, Settlement } from '../client/limiter-types.js'
import { INVALID_REQUEST, settlesAtOnce } from '../core/retry-policy.js'
import { statusSignal } from '../core/signals/index.js'
import type { Signal } from '../core/types.js'
import { AttemptHandler, type AttemptOwner, type DeliveryTarget } from './attempt-handler.js'
import type { GiveUpMode } from '../client/limiter-types.js'
import { isIdempotent, parseRawHeaders, type RawHeaders } from './dispatch-request.js'
import { bufferBody, isReplayableBody } from './replayable-body.js'
import { withSharedShape } from './dispatch-options.js'

/** Both handler APIs of undici 7 (a caller's handler has one of them, or both). */
export interface CallerHandler
  extends Omit<Dispatcher.DispatchHandler, 'onConnect' | 'onHeaders' | 'onData' | 'onComplete' | 'onError'> {
  onConnect?(abort: (reason?: Error) => void, context: object): void
  onHeaders?(statusCode: number, rawHeaders: RawHeaders, resume: () => void, statusMessage: string): boolean | void
  onData?(chunk: Buffer): boolean | void
  onComplete?(rawTrailers: RawHeaders | null): void
  onError?(error: Error): void
}

/**
 * Whether to speak the callback API to `handler`: it has no other, or it is undici's
 * `WrapHandler` (what `compose` puts around callback-style handlers), whose callback
 * side forwards to the wrapped handler unchanged. Any other handler offering both is
 * spoken to through the controller API, which undici treats as the primary one.
 */
export function speaksCallbacks(handler: CallerHandler): boolean {
  if (typeof handler.onRequestStart !== 'function') return true
  return typeof handler.onHeaders === 'function' && handler.constructor?.name === 'WrapHandler'
}

/** What the interceptor shares with every paced dispatch. */
export interface PacingContext {
  dispatch: Dispatcher.Dispatch
  /** `now` is read only when a rate-limit field is there (most responses have none). */
  readSignals(status: number, rawHeaders: RawHeaders | null, now: () => number): Signal
  now(): number
  discardMaxBytes: number
  /** Remember that this dispatch's route draws on the named policy (lane refinement). */
  learn: ((opts: Dispatcher.DispatchOptions, policy: string) => void) | undefined
  /** Bodies the first attempt would consume are read up to this many bytes and replayed. */
  maxBodyBytes: number
  /** The shell's `giveUp` option (undefined: the limiter's). */
  giveUp: GiveUpMode | undefined
  /**
   * The dispatches not yet settled nor delivered, kept only over a limiter the shell does not
   * own: closing the shell cannot close that limiter, so it ends them itself (see Pacing.close).
   */
  live: Set<PacedDispatch> | undefined
}

/** Give-up reason of a dispatch whose dispatcher underneath is closed or destroyed. */
const CLOSED = 'closed'

/** Give-up reason of a dispatch that a polite-fetch layer underneath gave up (as the fetch shell names a response a worker paced). */
const PACED_UPSTREAM = 'paced-upstream'

/** Why a throttled response was passed through instead of retried. */
export const BODY_NOT_REPLAYABLE = 'body-not-replayable'


type AbortListener = ((this: AbortSignal, event: Event) => unknown) | { handleEvent(event: Event): unknown }

/**
 * Also the limiter's Job for this dispatch (scope, attempt) and its `signal`: the caller
 * aborts through this controller, so the controller is the abort signal too (the subset
 * of AbortSignal the limiter uses: aborted, reason, add/removeEventListener). One object
 * per request instead of several, and no `new AbortController()`, which costs Node 20
 * several microseconds and much garbage: a real share of an unthrottled request.
 */
export class PacedDispatch
  implements Dispatcher.DispatchController, DeliveryTarget, AttemptOwner, Job<AttemptHandler>, Settlement<AttemptHandler>
{
  rawHeaders: Dispatcher.DispatchController['rawHeaders'] = null
  rawTrailers: Dispatcher.DispatchController['rawTrailers'] = null
  readonly handler: CallerHandler
  readonly #callbacks: boolean
  #opts: Dispatcher.DispatchOptions
  readonly #context: PacingContext
  #replayable: boolean
  // Usually exactly one listener (the limiter's call): kept in a slot, an array only beyond.
  #abortListener: AbortListener | undefined
  #moreAbortListeners: AbortListener[] | undefined
  #aborted = false
  #reason: Error | null = null
  #paused = false
  #settled = false
  #current: AttemptHandler | undefined
  #delivered: AttemptHandler | undefined
  /** Controller API: what resumes the delivered response's flow. */
  #resume: (() => void) | undefined

  /** The lane. Set before the job is run. */
  scope = ''

  constructor(opts: Dispatcher.DispatchOptions, handler: CallerHandler, context: PacingContext) {
    this.#opts = opts
    this.handler = handler
    this.#callbacks = speaksCallbacks(handler)
    this.#context = context
    this.#replayable = isReplayableBody(opts.body)
    context.live?.add(this)
  }

  get controller(): this {
    return this
  }
  get aborted(): boolean {
    return this.#aborted
  }
  /** The shell's `giveUp` option, read by the limiter when the call gives up. */
  get giveUp(): GiveUpMode | undefined {
    return this.#context.giveUp
  }
  /** The body is one the first attempt would consume: read it (`readBody`) before the job is run. */
  get bodyNeedsReading(): boolean {
    return !this.#replayable
  }

  /**
   * Reads a consumable body up to `maxBodyBytes`, so every attempt sends the same bytes; a
   * longer one is sent once, whole, and its 429 handed to the caller (`body-not-replayable`).
   * Resolves false when the caller aborted meanwhile (the handler has its error then) or
   * the body failed (the handler gets that error).
   */
  async readBody(): Promise<boolean> {
    let read: Awaited<ReturnType<typeof bufferBody>>
    try {
      read = await bufferBody(this.#opts.body, this.#context.maxBodyBytes, () => this.#aborted)
    } catch (error) {
      this.fail(error)
      return false
    }
    if (read === undefined || this.#aborted) return false
    // A spread gives its object a shape of its own: re-shared (see dispatch-options.ts).
    this.#opts = withSharedShape({ ...this.#opts, body: read.body as Dispatcher.DispatchOptions['body'] })
    this.#replayable = read.replayable
    return true
  }
  get paused(): boolean {
    return this.#paused
  }
  get reason(): Error | null {
    return this.#reason
  }
  /**
   * Give the caller's handler its means to abort now, before the lane wait, so an abort
   * during the wait cancels it instead of waiting for a socket to abort on.
   */
  begin(): void {
    if (this.#callbacks) this.handler.onConnect?.(abortFunctionOf(this), NO_CONTEXT)
    else this.handler.onRequestStart?.(this, NO_CONTEXT)
  }

  /** Caller's abort signal for the limiter: cancels the lane wait, the attempt and retry waits. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }

  addEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort' || listener == null || this.#aborted) return
    if (this.#abortListener === undefined) this.#abortListener = listener
    else if (this.#abortListener !== listener) (this.#moreAbortListeners ??= []).push(listener)
  }

  removeEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort') return
    if (this.#abortListener === listener) this.#abortListener = this.#moreAbortListeners?.shift()
    else if (this.#moreAbortListeners) {
      const at = this.#moreAbortListeners.indexOf(listener as AbortListener)
      if (at !== -1) this.#moreAbortListeners.splice(at, 1)
    }
  }

  #notifyAbort(): void {
    const first = this.#abortListener
    const rest = this.#moreAbortListeners
    this.#abortListener = undefined
    this.#moreAbortListeners = undefined
    if (first === undefined) return
    const event = new Event('abort')
    for (const listener of rest ? [first, ...rest] : [first]) {
      try {
        if (typeof listener === 'function') listener.call(this.signal, event)
        else listener.handleEvent(event)
      } catch (error) {
        // As EventTarget does: a throwing listener does not stop the others.
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }
  /**
   * For events and errors: method, origin and path, built only when asked for; never the
   * query string (it may carry credentials), as the fetch shell's label.
   */
  get label(): string {
    const path = this.#opts.path
    const query = path.indexOf('?')
    // A URL object's string ends in '/' ('http://a/'), which the path would double.
    const origin = this.#opts.origin
    const base = origin instanceof URL ? origin.origin : String(origin ?? '')
    return `${this.#opts.method} ${base}${query === -1 ? path : path.slice(0, query)}`
  }
  /** A failure without a response may have been processed: resend only what is safe to. */
  get retryErrors(): boolean {
    return this.#replayable && isIdempotent(this.#opts.method, this.#opts.headers)
  }

  abort(reason?: Error): void {
    if (this.#aborted) return
    this.#aborted = true
    this.#reason = reason ?? new errors.RequestAbortedError()
    if (this.#delivered) {
      // The response is the caller's now: undici reports the abort through the handler.
      this.#delivered.abort(this.#reason)
      return
    }
    this.#notifyAbort()
    this.#current?.abort(this.#reason)
    this.fail(this.#reason)
  }

  // Controller API (pause takes effect at the next callback's answer, as undici's own
  // controller for callback-style dispatchers does).
  pause(): void {
    this.#paused = true
  }

  resume(): void {
    if (!this.#paused) return
    this.#paused = false
    this.#resume?.()
  }

  #settle(): boolean {
    if (this.#settled) return false
    this.#settled = true
    this.#context.live?.delete(this)
    return true
  }

  // --- DeliveryTarget: the caller's handler, in its own API ---

  emitHeaders(statusCode: number, rawHeaders: RawHeaders, resume: () => void, statusMessage: string): boolean {
    if (this.#callbacks) return this.handler.onHeaders?.(statusCode, rawHeaders, resume, statusMessage) !== false
    this.rawHeaders = rawHeaders as Buffer[]
    this.#resume = resume
    this.handler.onResponseStart?.(this, statusCode, parseRawHeaders(rawHeaders) as never, statusMessage)
    return !this.#paused
  }

  emitData(chunk: Buffer): boolean {
    if (this.#callbacks) return this.handler.onData?.(chunk) !== false
    this.handler.onResponseData?.(this, chunk)
    return !this.#paused
  }

  emitEnd(rawTrailers: RawHeaders | null): void {
    if (!this.#settle()) return
    if (this.#callbacks) {
      this.handler.onComplete?.(rawTrailers)
      return
    }
    this.rawTrailers = rawTrailers as Buffer[] | null
    this.handler.onResponseEnd?.(this, parseRawHeaders(rawTrailers) as never)
  }

  emitError(error: Error): void {
    if (!this.#settle()) return
    if (this.#callbacks) this.handler.onError?.(error)
    else this.handler.onResponseError?.(this, error)
  }

  // --- Settlement: how the limiter's call ended ---

  /** The limiter chose this attempt's result: the caller gets it. */
  resolve(attempt: AttemptHandler): void {
    if (this.#delivered === attempt) return
    if (this.#settled || this.#delivered) {
      attempt.discard()
      return
    }
    this.#delivered = attempt
    this.#context.live?.delete(this)
    // A give-up answered with an earlier response (giveUp: 'response'): the attempt still in
    // flight is cancelled, as on a rejection.
    const current = this.#current
    if (current !== undefined && current !== attempt) {
      current.abort(new errors.RequestAbortedError('polite-fetch gave up on this request'))
      current.discard()
    }
    attempt.deliver(this)
  }

  /** Settle the caller's handler with an error (limiter rejection, abort before delivery). */
  reject(error: unknown): void {
    // Once delivered, the response belongs to the caller; only undici's own callbacks settle it.
    if (this.#delivered) return
    const reason = error instanceof Error ? error : new Error(String(error))
    // An attempt still in flight (deadline, close) is cancelled, not left to finish unseen.
    this.#current?.abort(reason)
    this.#current?.discard()
    this.emitError(reason)
  }

  fail(error: unknown): void {
    this.reject(error)
  }

  // --- Job: one limiter attempt = one real dispatch down the chain ---

  start(attemptSignal: AbortSignal | undefined, _attemptNumber: number, report: AttemptReport<AttemptHandler>): void {
    // Without a per-attempt timeout the limiter hands back our own caller signal, whose
    // abort already reaches the current attempt (see abort()): no listener needed.
    const signal = attemptSignal === this.signal ? undefined : attemptSignal
    const attempt = new AttemptHandler(this, signal, report)
    this.#current = attempt
    if (signal?.aborted) attempt.handleEvent()
    else signal?.addEventListener('abort', attempt)
    try {
      this.#context.dispatch(this.#opts, attempt as unknown as Dispatcher.DispatchHandler)
    } catch (error) {
      attempt.onError(error instanceof Error ? error : new Error(String(error)))
    }
  }

  /** The promise form, for a limiter that does not call `start`. */
  attempt(attemptSignal: AbortSignal | undefined, attemptNumber: number): Promise<AttemptOutcome<AttemptHandler>> {
    return new Promise((done, failed) => this.start(attemptSignal, attemptNumber, { done, failed }))
  }

  get discardMaxBytes(): number {
    return this.#context.discardMaxBytes
  }

  /** The attempt's response head (or failure) is in: tell the limiter what it said. */
  onHead(attempt: AttemptHandler): void {
    attempt.attemptSignal?.removeEventListener('abort', attempt)
    this.#readOutcome(attempt)
    if (settlesAtOnce(attempt.signal)) {
      // Not congestion: final whatever the limiter's state. Handed over now, inside
      // undici's callback (no pause, no promise), then the limiter learns from it.
      this.resolve(attempt)
      attempt.report.done(attempt)
      return
    }
    // Congestion or failure: the limiter decides (retry, give up, deliver) off undici's
    // callback stack, with the response held.
    queueMicrotask(() => attempt.report.done(attempt))
  }

  #readOutcome(attempt: AttemptHandler): void {
    attempt.retryable = this.#replayable
    if (!this.#replayable) attempt.reason = BODY_NOT_REPLAYABLE
    const statusCode = attempt.statusCode
    if (statusCode === 0) {
      // undici refuses a malformed request (bad header, method or path; a body that does not
      // match its content-length; an Expect header) before sending it: no attempt can succeed,
      // so the caller gets the error now, not after retries.
      if (isRefusedRequest(attempt.error)) {
        attempt.retryable = false
        attempt.reason = INVALID_REQUEST
      } else if (attempt.error instanceof errors.ClientClosedError || attempt.error instanceof errors.ClientDestroyedError) {
        // The dispatcher underneath was closed (an Agent composed with the interceptor, or
        // one given to the agent): every later attempt would fail the same way.
        attempt.retryable = false
        attempt.reason = CLOSED
      } else if (attempt.error instanceof PoliteFetchError) {
        // A polite-fetch layer underneath (install() twice, an agent given a polite dispatcher)
        // paced this request and gave up on it: its deadline, budget or Retry-After verdict is
        // final. Retried as a network failure, every call ran both layers' retries, one inside
        // the other, until the outer deadline.
        attempt.retryable = false
        attempt.reason = PACED_UPSTREAM
      }
      // Otherwise whether the request may be sent again is the job's `retryErrors`.
      return
    }
    let signal: Signal
    try {
      signal = this.#context.readSignals(statusCode, attempt.rawHeaders, this.#context.now)
    } catch {
      // Bad headers never break a request: treat them as absent.
      signal = statusSignal(statusCode, this.#context.now())
    }
    attempt.signal = signal
    if (signal.policy !== undefined) this.#context.learn?.(this.#opts, signal.policy)
  }

  onInformational(statusCode: number, rawHeaders: RawHeaders, statusMessage: string): void {
    if (this.#settled) return
    try {
      if (this.#callbacks) this.handler.onHeaders?.(statusCode, rawHeaders, noop, statusMessage)
      else this.handler.onResponseStart?.(this, statusCode, parseRawHeaders(rawHeaders) as never, statusMessage)
    } catch {
      // An informational response is advisory; a handler that chokes on it is not our failure.
    }
  }
}

function noop(): void {}

/** An error undici raises for the request itself, whatever the server: sending it again fails the same way. */
function isRefusedRequest(error: Error | undefined): boolean {
  return (
    error instanceof errors.InvalidArgumentError ||
    error instanceof errors.RequestContentLengthMismatchError ||
    error instanceof errors.NotSupportedError
  )
}

/** The function a callback-style handler aborts with (its only closure per request). */
function abortFunctionOf(paced: PacedDispatch): (reason?: Error) => void {
  return (reason) => paced.abort(reason)
}

// undici itself passes no context to onConnect; a shared empty object keeps handlers
// that read from it working without an allocation per request.
const NO_CONTEXT: object = Object.freeze({})
