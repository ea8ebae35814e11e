// The abort signal a paced dispatch hands the limiter as `job.signal`. undici callers
// abort through the dispatch controller, not through an AbortSignal, so we need one of
// our own per request; Node 20's `new AbortController()` costs several microseconds
// and much garbage, a large share of an unthrottled loopback request. This is the
// subset of AbortSignal the limiter uses (aborted, reason, add/removeEventListener
// for 'abort'), with the same semantics, at the cost of a plain object.

type AbortListener = ((this: AbortSignal, event: Event) => unknown) | { handleEvent(event: Event): unknown }

export class CallerSignal {
  aborted = false
  reason: unknown = undefined
  #listeners: AbortListener[] | undefined

  addEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort' || listener == null || this.aborted) return
    const listeners = (this.#listeners ??= [])
    if (!listeners.includes(listener)) listeners.push(listener)
  }

  removeEventListener(type: string, listener: AbortListener | null): void {
    const listeners = this.#listeners
    if (type !== 'abort' || listeners === undefined) return
    const at = listeners.indexOf(listener as AbortListener)
    if (at !== -1) listeners.splice(at, 1)
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.#listeners
    this.#listeners = undefined
    if (listeners === undefined) return
    const event = new Event('abort')
    for (const listener of listeners) {
      try {
        if (typeof listener === 'function') listener.call(this as unknown as AbortSignal, event)
        else listener.handleEvent(event)
      } catch (error) {
        // As EventTarget does: a throwing listener does not stop the others.
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }

  /** For the `Job.signal` slot, which is typed AbortSignal; the limiter uses only the members above. */
  asAbortSignal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}
