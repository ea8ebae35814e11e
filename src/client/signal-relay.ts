// The signal fetch gets when the attempt's signal is not the caller's (a `timeoutMs` gives each
// attempt a controller of the limiter's; over a shared limiter a call has one of the client's).
// Those let go of the caller's signal once the call settles, yet fetch keeps its signal for the
// body: the caller's abort must still end a download or stream, as with plain fetch. The relay
// follows both. Its listener on the caller's signal, which may live as long as the app, is
// removed when the attempt fails or, for a response, when that Response is garbage collected
// (as undici drops its own listener with its Request). AbortSignal.any would do the same in one
// call, but on Node 20 a composite signal that fetch listens to is kept until a source aborts:
// 100 000 calls under one long-lived signal held 124 MB after GC.

/** Releases the relays of responses that are gone (see `SignalRelay.holdFor`). */
const releases =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry<SignalRelay>((relay) => relay.release()) : undefined

export class SignalRelay {
  readonly #controller = new AbortController()
  readonly #attempt: AbortSignal
  readonly #caller: AbortSignal

  constructor(attempt: AbortSignal, caller: AbortSignal) {
    this.#attempt = attempt
    this.#caller = caller
    if (attempt.aborted) this.#controller.abort(attempt.reason)
    else if (caller.aborted) this.#controller.abort(caller.reason)
    else {
      attempt.addEventListener('abort', this)
      caller.addEventListener('abort', this)
    }
  }

  /** What fetch is handed: aborted, with its reason, by whichever of the two aborts first. */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** A source aborted (the relay is its own listener: no closure per attempt). */
  handleEvent(event: Event): void {
    this.release()
    this.#controller.abort((event.target as AbortSignal).reason)
  }

  /** Stops following both signals. */
  release(): void {
    this.#attempt.removeEventListener('abort', this)
    this.#caller.removeEventListener('abort', this)
  }

  /** Follows the caller's signal for as long as `response` (the attempt's answer) lives. */
  holdFor(response: object): void {
    // Without FinalizationRegistry the relay stays until a source aborts, as a listener fetch adds.
    releases?.register(response, this)
  }
}
