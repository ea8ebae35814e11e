// The page calls the worker is serving that their page may still abort. Chromium never
// aborts a FetchEvent's `request.signal` when the page aborts its fetch, so a call the
// page gave up on stayed queued (or retried) in the worker and was sent later, a POST
// included. A page's `polite.fetch` with a signal names its call in a header
// (CALL_HEADER) and posts `abort` with that name; this turns the message into the abort.

/** Aborts heard before their request (the message and the fetch event travel apart), kept at most. */
export const MAX_EARLY_ABORTS = 1_000

export interface PageCalls {
  /** The signal of the call `id`: aborted by the page's message, or by `requestSignal` where the browser aborts it. */
  open(id: string, requestSignal: AbortSignal): AbortSignal
  /** The call settled: its page's abort has nothing left to end. */
  close(id: string): void
  /** The page aborted the call `id` (perhaps before its request reached the worker). */
  abort(id: string): void
}

function abortError(): DOMException {
  return new DOMException('The page aborted the request.', 'AbortError')
}

export function createPageCalls(): PageCalls {
  const open = new Map<string, { controller: AbortController; detach: () => void }>()
  const early = new Set<string>()
  return {
    open(id, requestSignal) {
      const controller = new AbortController()
      if (early.delete(id)) controller.abort(abortError())
      else if (requestSignal.aborted) controller.abort(requestSignal.reason)
      if (controller.signal.aborted) return controller.signal
      const onAbort = (): void => controller.abort(requestSignal.reason)
      requestSignal.addEventListener('abort', onAbort, { once: true })
      open.set(id, { controller, detach: () => requestSignal.removeEventListener('abort', onAbort) })
      return controller.signal
    },
    close(id) {
      open.get(id)?.detach()
      open.delete(id)
    },
    abort(id) {
      const call = open.get(id)
      if (call !== undefined) {
        call.controller.abort(abortError())
        return
      }
      early.add(id)
      // Bounded: an abort for a call that never comes (a request the worker did not see) must not pile up.
      if (early.size > MAX_EARLY_ABORTS) early.delete(early.values().next().value as string)
    },
  }
}
