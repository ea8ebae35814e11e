// One caller dispatch as it goes through the limiter: the controller the caller's
// handler holds (abort / pause / resume), the limiter job whose attempts are real
// undici dispatches, and exactly-once settlement of the caller's handler.
import type { Dispatcher } from 'undici'
import { errors } from 'undici'
import type { AttemptOutcome, Job } from '../client/limiter-types.js'
import type { Signal } from '../core/types.js'
import { AttemptHandler, type DeliveryTarget, type ResponseHead } from './attempt-handler.js'
import { isIdempotent, isReplayableBody, responseHeaderSource } from './dispatch-request.js'

type Handler = Dispatcher.DispatchHandler

/** What the interceptor shares with every paced dispatch. */
export interface PacingContext {
  dispatch: Dispatcher.Dispatch
  readSignals(status: number, headers: ReturnType<typeof responseHeaderSource>, now: number): Signal
  now(): number
  discardMaxBytes: number
  /** Remember that this dispatch's route draws on the named policy (lane refinement). */
  learn: ((opts: Dispatcher.DispatchOptions, policy: string) => void) | undefined
}

/** Why a throttled response was passed through instead of retried. */
export const BODY_NOT_REPLAYABLE = 'body-not-replayable'

export class PacedDispatch implements Dispatcher.DispatchController, DeliveryTarget {
  rawHeaders: Dispatcher.DispatchController['rawHeaders'] = null
  rawTrailers: Dispatcher.DispatchController['rawTrailers'] = null
  readonly handler: Handler
  readonly #opts: Dispatcher.DispatchOptions
  readonly #context: PacingContext
  readonly #replayable: boolean
  readonly #abortJob = new AbortController()
  #aborted = false
  #reason: Error | null = null
  #paused = false
  #settled = false
  #current: AttemptHandler | undefined
  #delivered: AttemptHandler | undefined

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
    return this.#abortJob.signal
  }
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
    this.#abortJob.abort(this.#reason)
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
    this.#current?.discard()
    if (!this.settle()) return
    const reason = error instanceof Error ? error : new Error(String(error))
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
  attempt(attemptSignal: AbortSignal): Promise<AttemptOutcome<AttemptHandler>> {
    return new Promise((resolve) => {
      const context = this.#context
      const attempt = new AttemptHandler(
        (held) => {
          attemptSignal.removeEventListener('abort', onAbort)
          const outcome = this.#outcome(held)
          // A response that is not congestion is final whatever the limiter's state:
          // hand it over now, in undici's own callback, instead of pausing the socket
          // for a round trip through the limiter's promises (the no-cost-when-healthy path).
          if (outcome.signal.kind === 'ok') this.deliver(held)
          resolve(outcome)
        },
        (info) => this.#informational(info),
        context.discardMaxBytes,
      )
      const onAbort = (): void => attempt.abort(asError(attemptSignal.reason))
      this.#current = attempt
      if (attemptSignal.aborted) onAbort()
      else attemptSignal.addEventListener('abort', onAbort, { once: true })
      try {
        context.dispatch(this.#opts, attempt)
      } catch (error) {
        attempt.onResponseError(undefined, asError(error))
      }
    })
  }

  #outcome(attempt: AttemptHandler): AttemptOutcome<AttemptHandler> {
    const discard = (): void => attempt.discard()
    const now = this.#context.now()
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
      signal = this.#context.readSignals(statusCode, responseHeaderSource(headers), now)
    } catch {
      // Bad headers never break a request: treat them as absent.
      signal = { kind: statusCode === 429 ? 'throttled' : statusCode === 503 ? 'overloaded' : 'ok', status: statusCode }
    }
    if (signal.policy !== undefined) this.#context.learn?.(this.#opts, signal.policy)
    const outcome: AttemptOutcome<AttemptHandler> = { signal, value: attempt, retryable: this.#replayable, discard }
    if (!this.#replayable) outcome.reason = BODY_NOT_REPLAYABLE
    return outcome
  }

  #informational(info: ResponseHead): void {
    if (this.#settled) return
    try {
      this.handler.onResponseStart?.(this, info.statusCode, info.headers as never, info.statusMessage)
    } catch {
      // An informational response is advisory; a handler that chokes on it is not our failure.
    }
  }
}

/** The limiter job for one dispatch. */
export function dispatchJob(paced: PacedDispatch, scope: string, label: string): Job<AttemptHandler> {
  return {
    scope,
    signal: paced.signal,
    label,
    // A failure without a response may have been processed: resend only what is safe to.
    retryErrors: paced.retryErrors,
    attempt: (attemptSignal) => paced.attempt(attemptSignal),
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new errors.RequestAbortedError(String(reason ?? 'aborted'))
}
