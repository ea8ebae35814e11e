// One caller dispatch as it goes through the limiter: the controller the caller's
// handler holds (abort / pause / resume), the limiter job whose attempts are real
// undici dispatches, and exactly-once settlement of the caller's handler.
import type { Dispatcher } from 'undici'
import { errors } from 'undici'
import type { AttemptOutcome, Job } from '../client/limiter-types.js'
import type { Signal } from '../core/types.js'
import { AttemptHandler, type AttemptOwner, type DeliveryTarget, type ResponseHead } from './attempt-handler.js'
import { isIdempotent, isReplayableBody } from './dispatch-request.js'

type Handler = Dispatcher.DispatchHandler

/** What the interceptor shares with every paced dispatch. */
export interface PacingContext {
  dispatch: Dispatcher.Dispatch
  readSignals(status: number, headers: Record<string, string | string[] | undefined>, now: number): Signal
  now(): number
  discardMaxBytes: number
  /** Remember that this dispatch's route draws on the named policy (lane refinement). */
  learn: ((opts: Dispatcher.DispatchOptions, policy: string) => void) | undefined
}

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
export class PacedDispatch implements Dispatcher.DispatchController, DeliveryTarget, AttemptOwner, Job<AttemptHandler> {
  rawHeaders: Dispatcher.DispatchController['rawHeaders'] = null
  rawTrailers: Dispatcher.DispatchController['rawTrailers'] = null
  readonly handler: Handler
  readonly #opts: Dispatcher.DispatchOptions
  readonly #context: PacingContext
  readonly #replayable: boolean
  // Usually exactly one listener (the limiter's call): kept in a slot, an array only beyond.
  #abortListener: AbortListener | undefined
  #moreAbortListeners: AbortListener[] | undefined
  #aborted = false
  #reason: Error | null = null
  #paused = false
  #settled = false
  #current: AttemptHandler | undefined
  #delivered: AttemptHandler | undefined

  /** The lane. Set before the job is run. */
  scope = ''

  constructor(opts: Dispatcher.DispatchOptions, handler: Handler, context: PacingContext) {
    this.#opts = opts
    this.handler = handler
    this.#context = context
    this.#replayable = isReplayableBody(opts.body)
  }

  get controller(): this {
    return this
  }
  get aborted(): boolean {
    return this.#aborted
  }
  get paused(): boolean {
    return this.#paused
  }
  get reason(): Error | null {
    return this.#reason
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
  /** For events and errors: method and URL, built only when asked for. */
  get label(): string {
    return `${this.#opts.method} ${String(this.#opts.origin ?? '')}${this.#opts.path}`
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

  pause(): void {
    this.#paused = true
    this.#delivered?.pause()
  }

  resume(): void {
    if (!this.#paused) return
    this.#paused = false
    this.#delivered?.resume()
  }

  settle(): boolean {
    if (this.#settled) return false
    this.#settled = true
    return true
  }

  /** Settle the caller's handler with an error (limiter rejection, abort before delivery). */
  fail(error: unknown): void {
    // Once delivered, the response belongs to the caller; only undici's own callbacks settle it.
    if (this.#delivered) return
    const reason = error instanceof Error ? error : new Error(String(error))
    // An attempt still in flight (deadline, close) is cancelled, not left to finish unseen.
    this.#current?.abort(reason)
    this.#current?.discard()
    if (!this.settle()) return
    this.handler.onResponseError?.(this, reason)
  }

  /** The limiter chose this attempt's result: the caller gets it. */
  deliver(attempt: AttemptHandler): void {
    if (this.#delivered === attempt) return
    if (this.#settled || this.#delivered) {
      attempt.discard()
      return
    }
    this.#delivered = attempt
    attempt.deliver(this)
  }

  /** One limiter attempt = one real dispatch down the chain. */
  attempt(attemptSignal: AbortSignal | undefined): Promise<AttemptOutcome<AttemptHandler>> {
    return new Promise((resolve) => {
      // Without a per-attempt timeout the limiter hands back our own caller signal, whose
      // abort already reaches the current attempt (see abort()): no listener needed.
      const signal = attemptSignal === this.signal ? undefined : attemptSignal
      const attempt = new AttemptHandler(this, signal, resolve)
      this.#current = attempt
      if (signal?.aborted) attempt.handleEvent()
      else signal?.addEventListener('abort', attempt)
      try {
        this.#context.dispatch(this.#opts, attempt)
      } catch (error) {
        attempt.onResponseError(undefined, error instanceof Error ? error : new Error(String(error)))
      }
    })
  }

  get discardMaxBytes(): number {
    return this.#context.discardMaxBytes
  }

  /** The attempt's response head (or failure) is in: tell the limiter what it said. */
  onHead(attempt: AttemptHandler): void {
    attempt.attemptSignal?.removeEventListener('abort', attempt)
    const outcome = this.#outcome(attempt)
    // A response that is not congestion is final whatever the limiter's state: hand it
    // over now, in undici's own callback, instead of pausing the socket for a round trip
    // through the limiter's promises (the no-cost-when-healthy path).
    if (outcome.signal.kind === 'ok') this.deliver(attempt)
    attempt.resolveOutcome(outcome)
  }

  #outcome(attempt: AttemptHandler): AttemptOutcome<AttemptHandler> {
    const discard = AttemptHandler.discardOutcome
    if (!attempt.head) {
      // No response: whether the request may be sent again is the job's `retryErrors`.
      const outcome: AttemptOutcome<AttemptHandler> = {
        signal: { kind: 'error', status: 0 },
        value: attempt,
        retryable: this.#replayable,
        discard,
      }
      if (!this.#replayable) outcome.reason = BODY_NOT_REPLAYABLE
      return outcome
    }
    const { statusCode, headers } = attempt.head
    let signal: Signal
    try {
      signal = this.#context.readSignals(statusCode, headers, this.#context.now())
    } catch {
      // Bad headers never break a request: treat them as absent.
      signal = { kind: statusCode === 429 ? 'throttled' : statusCode === 503 ? 'overloaded' : 'ok', status: statusCode }
    }
    if (signal.policy !== undefined) this.#context.learn?.(this.#opts, signal.policy)
    const outcome: AttemptOutcome<AttemptHandler> = { signal, value: attempt, retryable: this.#replayable, discard }
    if (!this.#replayable) outcome.reason = BODY_NOT_REPLAYABLE
    return outcome
  }

  onInformational(info: ResponseHead): void {
    if (this.#settled) return
    try {
      this.handler.onResponseStart?.(this, info.statusCode, info.headers as never, info.statusMessage)
    } catch {
      // An informational response is advisory; a handler that chokes on it is not our failure.
    }
  }
}
