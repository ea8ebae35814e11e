// The undici handler of ONE attempt. It holds the response at its start (the
// connection paused) until the limiter decides: deliver it to the caller's handler,
// or discard it (drain a 429/503 body so the socket can be reused) and try again.
// Anything undici reports while the response is held is queued and replayed on
// delivery, so the caller sees exactly one coherent response.
import type { Dispatcher } from 'undici'
import { errors } from 'undici'
import type { AttemptOutcome } from '../client/limiter-types.js'

type Controller = Dispatcher.DispatchController
type Handler = Dispatcher.DispatchHandler
type Headers = Record<string, string | string[] | undefined>

/** The caller-facing side that a delivered attempt forwards to (see PacedDispatch). */
export interface DeliveryTarget {
  readonly handler: Handler
  readonly controller: Controller
  readonly paused: boolean
  /** The caller's handler got its final callback (end or error). */
  settle(): boolean
}

export interface ResponseHead {
  statusCode: number
  headers: Headers
  statusMessage: string | undefined
}

type Queued =
  | { kind: 'data'; chunk: Buffer }
  | { kind: 'end'; trailers: Headers }
  | { kind: 'error'; error: Error }

type Mode = 'waiting' | 'held' | 'delivered' | 'discarded'

/** Who started the attempt: told when its head (or failure) is in. */
export interface AttemptOwner {
  onHead(attempt: AttemptHandler): void
  onInformational(head: ResponseHead): void
  readonly discardMaxBytes: number
}

export class AttemptHandler implements Handler {
  head: ResponseHead | undefined
  /** The failure, when the attempt ended without a response. */
  error: Error | undefined
  /** The limiter's signal for this attempt (timeout, deadline, close), when it is not the caller's own. */
  readonly attemptSignal: AbortSignal | undefined
  /** Settles the limiter's attempt promise. */
  readonly resolveOutcome: (outcome: AttemptOutcome<AttemptHandler>) => void
  #mode: Mode = 'waiting'
  #controller: Controller | undefined
  #pendingAbort: Error | undefined
  // Events undici reported while the response was held; allocated only when there are any.
  #queue: Queued[] | undefined
  #target: DeliveryTarget | undefined
  #discardedBytes = 0
  readonly #owner: AttemptOwner

  constructor(
    owner: AttemptOwner,
    attemptSignal: AbortSignal | undefined,
    resolveOutcome: (outcome: AttemptOutcome<AttemptHandler>) => void,
  ) {
    this.#owner = owner
    this.attemptSignal = attemptSignal
    this.resolveOutcome = resolveOutcome
  }

  /** The attempt signal aborted (this object is its listener: no closure per attempt). */
  handleEvent(): void {
    const reason: unknown = this.attemptSignal?.reason
    this.abort(reason instanceof Error ? reason : new errors.RequestAbortedError(String(reason ?? 'aborted')))
  }

  /** Shared `discard` of every outcome (the limiter calls it as `outcome.discard()`). */
  static discardOutcome(this: AttemptOutcome<AttemptHandler>): void {
    this.value.discard()
  }

  /** Abort this attempt's request while in flight (timeout, caller abort, deadline) or once delivered (caller abort). */
  abort(reason: Error): void {
    // A held or discarded response is already decided on: it is drained, not cut off.
    if (this.#mode === 'held' || this.#mode === 'discarded') return
    if (this.#controller) this.#controller.abort(reason)
    else this.#pendingAbort ??= reason
  }

  pause(): void {
    this.#controller?.pause()
  }

  resume(): void {
    if (this.#mode !== 'delivered' || !this.#target) return
    this.#flush(this.#target)
  }

  /** Hand the held response (or the failure) to the caller's handler. */
  deliver(target: DeliveryTarget): void {
    this.#target = target
    this.#mode = 'delivered'
    if (!this.head) {
      if (target.settle()) target.handler.onResponseError?.(target.controller, this.error ?? new Error('attempt failed'))
      return
    }
    const { statusCode, headers, statusMessage } = this.head
    try {
      target.controller.rawHeaders = this.#controller?.rawHeaders
      target.handler.onResponseStart?.(target.controller, statusCode, headers as never, statusMessage)
    } catch (error) {
      this.#failDelivery(target, error)
      return
    }
    this.#flush(target)
  }

  /** Throw the held response away: drain a small body (keeps the socket), abort a large one. */
  discard(): void {
    if (this.#mode === 'discarded' || this.#mode === 'delivered') return
    this.#mode = 'discarded'
    const finished = this.#queue?.some((item) => item.kind !== 'data') ?? false
    this.#queue = undefined
    if (!finished) this.#controller?.resume()
  }

  onRequestStart(controller: Controller): void {
    this.#controller = controller
    if (this.#pendingAbort) controller.abort(this.#pendingAbort)
  }

  onResponseStart(controller: Controller, statusCode: number, headers: Headers, statusMessage?: string): void {
    if (statusCode < 200) {
      // 1xx informational: harmless to pass on at once (undici's onInfo).
      this.#owner.onInformational({ statusCode, headers, statusMessage })
      return
    }
    this.head = { statusCode, headers, statusMessage }
    this.#mode = 'held'
    this.#owner.onHead(this)
    // Still undecided (a 429/503 the limiter may retry): hold the body back.
    if (this.#mode === 'held') controller.pause()
  }

  /** Whether the caller's handler already has this attempt. */
  get delivered(): boolean {
    return this.#mode === 'delivered'
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    switch (this.#mode) {
      case 'delivered': {
        const target = this.#target!
        target.handler.onResponseData?.(target.controller, chunk)
        if (target.paused) controller.pause()
        return
      }
      case 'discarded':
        this.#discardedBytes += chunk.length
        if (this.#discardedBytes > this.#owner.discardMaxBytes) controller.abort(new Error('discarded response body too large'))
        return
      default:
        (this.#queue ??= []).push({ kind: 'data', chunk })
    }
  }

  onResponseEnd(_controller: Controller, trailers: Headers): void {
    switch (this.#mode) {
      case 'delivered': {
        const target = this.#target!
        target.controller.rawTrailers = this.#controller?.rawTrailers
        if (target.settle()) target.handler.onResponseEnd?.(target.controller, trailers as never)
        return
      }
      case 'discarded':
        return
      default:
        (this.#queue ??= []).push({ kind: 'end', trailers })
    }
  }

  onResponseError(_controller: Controller | undefined, error: Error): void {
    switch (this.#mode) {
      case 'waiting':
        this.error = error
        this.#mode = 'held'
        this.#owner.onHead(this)
        return
      case 'delivered': {
        const target = this.#target!
        if (target.settle()) target.handler.onResponseError?.(target.controller, error)
        return
      }
      case 'discarded':
        return
      default:
        (this.#queue ??= []).push({ kind: 'error', error })
    }
  }

  #flush(target: DeliveryTarget): void {
    try {
      const queue = this.#queue
      while (queue !== undefined && queue.length > 0 && !target.paused) {
        const item = queue.shift()!
        if (item.kind === 'data') target.handler.onResponseData?.(target.controller, item.chunk)
        else if (item.kind === 'end') {
          target.controller.rawTrailers = this.#controller?.rawTrailers
          if (target.settle()) target.handler.onResponseEnd?.(target.controller, item.trailers as never)
        } else if (target.settle()) target.handler.onResponseError?.(target.controller, item.error)
      }
    } catch (error) {
      this.#failDelivery(target, error)
      return
    }
    if ((this.#queue === undefined || this.#queue.length === 0) && !target.paused) this.#controller?.resume()
  }

  // A caller handler that throws is treated as undici treats it: the request fails.
  #failDelivery(target: DeliveryTarget, error: unknown): void {
    const reason = error instanceof Error ? error : new Error(String(error))
    this.#queue = undefined
    this.#controller?.abort(reason)
    if (target.settle()) target.handler.onResponseError?.(target.controller, reason)
  }
}
