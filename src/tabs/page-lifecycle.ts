// When a tab leaves its group. A page that closes (pagehide) leaves for good. A page the
// back/forward cache keeps (pagehide with `persisted`) may come back (pageshow with
// `persisted`), with its scripts and their limiter as they were: it must leave the group
// while frozen (its locks and calls would hold every other tab up) and take part again
// when shown. Closing for good there left every later call of the page a ClosedError.

export interface PageLifecycle {
  /** The page is going away for good. */
  close(): void
  /** The page is kept in the back/forward cache: leave, and be ready to come back. */
  suspend(): void
  /** The page came back from the back/forward cache. */
  resume(): void
}

const persisted = (event: Event) => (event as Event & { persisted?: unknown }).persisted === true

type Events = Pick<EventTarget, 'addEventListener' | 'removeEventListener'>

/** Follow the lifecycle events of `target` (the page's global scope), if it has any; returns the function that stops. */
export function followPageLifecycle(target: Partial<Events> | null, lifecycle: PageLifecycle): () => void {
  if (target === null || typeof target.addEventListener !== 'function') return () => {}
  const onHide = (event: Event) => (persisted(event) ? lifecycle.suspend() : lifecycle.close())
  const onShow = (event: Event) => {
    if (persisted(event)) lifecycle.resume()
  }
  target.addEventListener('pagehide', onHide)
  target.addEventListener('pageshow', onShow)
  return () => {
    target.removeEventListener?.('pagehide', onHide)
    target.removeEventListener?.('pageshow', onShow)
  }
}
