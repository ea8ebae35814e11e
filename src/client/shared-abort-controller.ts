/**
 * An AbortController whose signal many calls follow at once: the limiter's lifetime signal (every
 * attempt without a signal of its own) and the client's closing signal (every Request body being
 * read, detached when the read ends). Node warns past 10 listeners on one EventTarget ("Possible
 * EventTarget memory leak"), which 11 concurrent calls reach (ky and axios hand fetch a Request
 * with a body); the listeners are bounded by the calls in progress, not leaked, so the warning is
 * lifted for these signals. Browsers have no such limit; `process.getBuiltinModule` (Node ≥ 20.16) keeps
 * `node:events` out of the browser bundle.
 */
export function sharedAbortController(): AbortController {
  const controller = new AbortController()
  const node = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
  const events = node?.getBuiltinModule?.('node:events') as
    | { setMaxListeners?: (n: number, ...targets: EventTarget[]) => void }
    | undefined
  try {
    events?.setMaxListeners?.(0, controller.signal)
  } catch {
    // A signal that is not Node's own (a DOM shim such as happy-dom's on Node) has no such limit.
  }
  return controller
}
