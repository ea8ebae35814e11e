// The undici handler of ONE attempt, and that attempt's outcome for the limiter. It
// speaks undici's callback ("legacy") handler API downward: the dispatcher under us
// then hands it the raw header Buffers as they came off the parser, with no
// conversion to the newer controller API and back (which costs a Buffer or a string
// per header, twice). A healthy response is handed to the caller inside undici's own
// callback, with undici's own `resume`. A 429/503 is held (the connection paused, by
// returning false) until the limiter decides: deliver it, or discard it (drain the
// body so the socket is reused) and try again. Whatever undici reports while the
// response is held is queued and replayed on delivery, so the caller sees exactly one
// coherent response.
import { errors } from 'undici'
import { giveUpFields } from '../client/give-up-header.js'
import type { AttemptOutcome, AttemptReport } from '../client/limiter-types.js'
import type { Signal } from '../core/types.js'
import type { RawHeaders } from './dispatch-request.js'

/** The caller-facing side a delivered attempt forwards to (see PacedDispatch). Returns: keep reading. */
export interface DeliveryTarget {
  emitHeaders(statusCode: number, rawHeaders: RawHeaders, resume: () => void, statusMessage: string): boolean
  emitData(chunk: Buffer): boolean
  /** Both settle the caller's handler (at most once, whichever comes first). */
  emitEnd(rawTrailers: RawHeaders | null): void
  emitError(error: Error): void
}

type Queued =
  | { kind: 'data'; chunk: Buffer }
  | { kind: 'end'; trailers: RawHeaders | null }
  | { kind: 'error'; error: Error }

type Mode = 'waiting' | 'held' | 'delivered' | 'discarded'

/** Who started the attempt: told when its head (or failure) is in. */
export interface AttemptOwner {
  onHead(attempt: AttemptHandler): void
  onInformational(statusCode: number, rawHeaders: RawHeaders, statusMessage: string): void
  readonly discardMaxBytes: number
}

// Outside the class: an arrow over `this` inside deliver() would make V8 allocate its
// context on every call, resumer needed or not.
function resumerOf(attempt: AttemptHandler): () => void {
  return () => attempt.resume()
}

function noop(): void {}

const NO_TRAILERS: RawHeaders = Object.freeze([]) as RawHeaders

/** `raw` with `fields` set: same-named fields the server sent are dropped, the new ones appended (as Buffers, as undici's own). */
function withFields(raw: RawHeaders, fields: [string, string][]): RawHeaders {
  const names = new Set(fields.map(([name]) => name))
  const out: (Buffer | string | ReadonlyArray<Buffer | string>)[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (names.has(String(raw[i]).toLowerCase())) continue
    out.push(raw[i]!, raw[i + 1]!)
  }
  for (const [name, value] of fields) out.push(Buffer.from(name, 'latin1'), Buffer.from(value, 'latin1'))
  return out
}

const NO_SIGNAL: Signal = Object.freeze({ kind: 'error', status: 0 }) as Signal

export class AttemptHandler implements AttemptOutcome<AttemptHandler> {
  // --- the outcome the limiter reads (set by the owner in onHead) ---
  signal: Signal = NO_SIGNAL
  retryable = false
  reason: string | undefined = undefined

  // --- the response ---
  /** 0 until a response head is in (and when the attempt failed without one). */
  statusCode = 0
  rawHeaders: RawHeaders | null = null
  statusMessage = ''
  /** The failure, when the attempt ended without a response. */
  error: Error | undefined
  /** The limiter's signal for this attempt (timeout, deadline, close), when it is not the caller's own. */
  readonly attemptSignal: AbortSignal | undefined
  /** Where the outcome goes (the limiter's call). */
  readonly report: AttemptReport<AttemptHandler>
  #mode: Mode = 'waiting'
  #abort: ((reason: Error) => void) | undefined
  #resume: (() => void) | undefined
  #pendingAbort: Error | undefined
  // Events undici reported while the response was held; allocated only when there are any.
  #queue: Queued[] | undefined
  #target: DeliveryTarget | undefined
  /** The caller's last answer: false = it wants the stream paused until it resumes. */
  #flowing = true
  #discardedBytes = 0
  readonly #owner: AttemptOwner

  constructor(owner: AttemptOwner, attemptSignal: AbortSignal | undefined, report: AttemptReport<AttemptHandler>) {
    this.#owner = owner
    this.attemptSignal = attemptSignal
    this.report = report
  }

  /** AttemptOutcome.value: the attempt is its own outcome (one object per attempt). */
  get value(): AttemptHandler {
    return this
  }

  /** Whether the caller's handler already has this attempt. */
  get delivered(): boolean {
    return this.#mode === 'delivered'
  }

  /** The attempt signal aborted (this object is its listener: no closure per attempt). */
  handleEvent(): void {
    const reason: unknown = this.attemptSignal?.reason
    this.abort(reason instanceof Error ? reason : new errors.RequestAbortedError(String(reason ?? 'aborted')))
  }

  /** Abort this attempt's request while in flight (timeout, caller abort, deadline) or once delivered (caller abort). */
  abort(reason: Error): void {
    // A held or discarded response is already decided on: it is drained, not cut off.
    if (this.#mode === 'held' || this.#mode === 'discarded') return
    if (this.#abort) this.#abort(reason)
    else this.#pendingAbort ??= reason
  }

  /** The caller wants more (its resume): replay what is queued, then let undici read on. */
  resume(): void {
    if (this.#mode !== 'delivered' || !this.#target) return
    this.#flowing = true
    this.#flush(this.#target)
  }

  /**
   * AttemptOutcome.gaveUp (`giveUp: 'response'`): the caller gets this response after all, with
   * the give-up fields added. Called on a held response, or on one already discarded for a retry
   * the call then never made (it is delivered without its body).
   */
  gaveUp(reason: string, retryAt: number | undefined, copy = false): AttemptHandler {
    const rawHeaders = withFields(this.rawHeaders ?? [], giveUpFields(reason, retryAt))
    if (!copy) {
      this.rawHeaders = rawHeaders
      return this
    }
    // For another dispatch: a head of its own, delivered without a body.
    const head = new AttemptHandler(this.#owner, undefined, this.report)
    head.statusCode = this.statusCode
    head.rawHeaders = rawHeaders
    head.statusMessage = this.statusMessage
    head.signal = this.signal
    head.#mode = 'discarded'
    return head
  }

  /** Hand the response (or the failure) to the caller; called with the response held, or inside onHeaders. */
  deliver(target: DeliveryTarget): void {
    this.#target = target
    if (this.#mode === 'discarded') {
      // Its body went to the drain: the head alone, and undici's later callbacks stay ignored.
      this.#deliverHead(target)
      return
    }
    const held = this.#mode === 'held'
    this.#mode = 'delivered'
    if (this.statusCode === 0) {
      target.emitError(this.error ?? new Error('attempt failed'))
      return
    }
    try {
      // Delivered inside undici's onHeaders with nothing queued: undici's own resume will do.
      const resume = held && this.#queue === undefined && this.#inHeaders ? this.#resume! : resumerOf(this)
      this.#flowing = target.emitHeaders(this.statusCode, this.rawHeaders!, resume, this.statusMessage)
    } catch (error) {
      this.#failDelivery(target, error)
      return
    }
    if (!this.#inHeaders) this.#flush(target)
  }

  #deliverHead(target: DeliveryTarget): void {
    try {
      target.emitHeaders(this.statusCode, this.rawHeaders!, noop, this.statusMessage)
    } catch (error) {
      target.emitError(error instanceof Error ? error : new Error(String(error)))
      return
    }
    // No trailers: an empty list, as undici's parser hands `request` (it reads their length).
    target.emitEnd(NO_TRAILERS)
  }

  /** Throw the held response away: drain a small body (keeps the socket), abort a large one. */
  discard(): void {
    // Nothing to throw away before a head (or failure) is in, and the attempt must still report
    // its end when undici gives it (the limiter holds its in-flight slot until then); a call
    // already over then discards what comes.
    if (this.#mode !== 'held') return
    this.#mode = 'discarded'
    const finished = this.#queue?.some((item) => item.kind !== 'data') ?? false
    this.#queue = undefined
    if (!finished && !this.#inHeaders) this.#resume?.()
  }

  // True while undici's onHeaders runs (its return value then says paused or not).
  #inHeaders = false

  // --- undici's handler API ---

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort
    if (this.#pendingAbort) abort(this.#pendingAbort)
  }

  onHeaders(statusCode: number, rawHeaders: RawHeaders, resume: () => void, statusMessage: string): boolean {
    if (statusCode < 200) {
      // 1xx informational: harmless to pass on at once.
      this.#owner.onInformational(statusCode, rawHeaders, statusMessage)
      return true
    }
    this.statusCode = statusCode
    this.rawHeaders = rawHeaders
    this.statusMessage = statusMessage
    this.#resume = resume
    this.#mode = 'held'
    this.#inHeaders = true
    try {
      this.#owner.onHead(this)
    } finally {
      this.#inHeaders = false
    }
    // onHead may have delivered or discarded the attempt (read afresh: TypeScript keeps the narrowing).
    const mode = this.#mode as Mode
    if (mode === 'delivered') return this.#flowing
    // Still undecided (a 429/503 the limiter may retry): hold the body back.
    return mode === 'discarded'
  }

  onData(chunk: Buffer): boolean {
    switch (this.#mode) {
      case 'delivered':
        return (this.#flowing = this.#target!.emitData(chunk))
      case 'discarded':
        this.#discardedBytes += chunk.length
        if (this.#discardedBytes > this.#owner.discardMaxBytes) this.#abort?.(new Error('discarded response body too large'))
        return true
      default:
        ;(this.#queue ??= []).push({ kind: 'data', chunk })
        return false
    }
  }

  onComplete(rawTrailers: RawHeaders | null): void {
    switch (this.#mode) {
      case 'delivered':
        this.#target!.emitEnd(rawTrailers)
        return
      case 'discarded':
        return
      default:
        ;(this.#queue ??= []).push({ kind: 'end', trailers: rawTrailers })
    }
  }

  onError(error: Error): void {
    switch (this.#mode) {
      case 'waiting':
        this.error = error
        this.#mode = 'held'
        this.#owner.onHead(this)
        return
      case 'delivered':
        this.#target!.emitError(error)
        return
      case 'discarded':
        return
      default:
        ;(this.#queue ??= []).push({ kind: 'error', error })
    }
  }

  #flush(target: DeliveryTarget): void {
    const queue = this.#queue
    try {
      while (queue !== undefined && queue.length > 0 && this.#flowing) {
        const item = queue.shift()!
        if (item.kind === 'data') this.#flowing = target.emitData(item.chunk)
        else if (item.kind === 'end') target.emitEnd(item.trailers)
        else target.emitError(item.error)
      }
    } catch (error) {
      this.#failDelivery(target, error)
      return
    }
    if ((queue === undefined || queue.length === 0) && this.#flowing) this.#resume?.()
  }

  // A caller handler that throws is treated as undici treats it: the request fails.
  #failDelivery(target: DeliveryTarget, error: unknown): void {
    const reason = error instanceof Error ? error : new Error(String(error))
    this.#queue = undefined
    this.#abort?.(reason)
    target.emitError(reason)
  }
}
