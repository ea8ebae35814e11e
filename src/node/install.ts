// One line to pace everything in a Node process that goes through undici's global
// dispatcher: `undici.request`/`fetch` without a `dispatcher` option, Node's own
// global `fetch`, and SDKs built on either.
import { Agent, Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici'
import { politeInterceptor, type PoliteInterceptorOptions } from './interceptor.js'
import type { Limiter } from '../client/create-limiter.js'

export interface InstallOptions extends PoliteInterceptorOptions {
  /**
   * The dispatcher to pace. Default: the current global dispatcher when it is an
   * undici 7 dispatcher, else a new `Agent` (see below).
   */
  dispatcher?: Dispatcher
}

export interface Installed {
  /** The limiter every paced request goes through: `stats()`, `on(...)`. */
  readonly limiter: Limiter
  /** The paced dispatcher now installed globally. */
  readonly dispatcher: Dispatcher
  /** Put the previous global dispatcher back. Idempotent. */
  uninstall(): void
  /** `uninstall()`, then stop telemetry and close the limiter (saving pacer state to the store). */
  close(): Promise<void>
}

/**
 * `install(options?)`: wrap the global dispatcher with `politeInterceptor`.
 *
 * Node 20's global `fetch` is Node's bundled undici, which reads the same global
 * dispatcher (`Symbol.for('undici.globalDispatcher.1')`) that this package's undici
 * sets, so it is paced too. If the bundled undici created that dispatcher first (a
 * `fetch` ran before this module loaded), it is an undici 6 Agent whose interceptors
 * speak an older handler API; it is not composed, a fresh undici 7 `Agent` takes its
 * place (pass `dispatcher` to choose another).
 */
export function install(options: InstallOptions = {}): Installed {
  const previous = getGlobalDispatcher()
  const base = options.dispatcher ?? (previous instanceof Dispatcher ? previous : new Agent())
  const interceptor = politeInterceptor(options)
  const dispatcher = base.compose(interceptor)
  setGlobalDispatcher(dispatcher)
  let installed = true
  const uninstall = (): void => {
    if (!installed) return
    installed = false
    // Only undo our own installation: someone may have installed over it since.
    if (getGlobalDispatcher() === dispatcher) setGlobalDispatcher(previous)
  }
  return {
    limiter: interceptor.limiter,
    dispatcher,
    uninstall,
    async close() {
      uninstall()
      await interceptor.close()
    },
  }
}
