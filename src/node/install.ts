// One line to pace everything in a Node process that goes through undici's global
// dispatcher: `undici.request`/`fetch` without a `dispatcher` option, Node's own
// global `fetch`, and SDKs built on either.
import { Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici'
import type { Limiter } from '../client/create-limiter.js'
import { checkPoliteOptionNames, type PoliteOptions } from './pacing.js'
import { PoliteAgent } from './polite-agent.js'

export interface InstallOptions extends PoliteOptions {
  /**
   * The dispatcher to pace. Default: the current global dispatcher when it is an
   * undici 7 dispatcher, else a new `Agent` (see below).
   */
  dispatcher?: Dispatcher
}

export interface Installed {
  /** The limiter every paced request goes through: `stats()`, `on(...)`. */
  readonly limiter: Limiter
  /** The paced dispatcher now installed globally (a `PoliteAgent` over `options.dispatcher` or the previous one). */
  readonly dispatcher: PoliteAgent
  /** Put the previous global dispatcher back (skipping earlier installations uninstalled since). Idempotent. */
  uninstall(): void
  /** `uninstall()`, then stop telemetry and close the limiter (saving pacer state to the store). */
  close(): Promise<void>
}

// Every installation's agent, with what it replaced and whether it is still installed.
const installations = new WeakMap<Dispatcher, { previous: Dispatcher; installed: boolean }>()

/**
 * What to put back for an installation that replaced `previous`: an installation made before
 * it and already uninstalled (its agent closed, likely: two libraries that install() and close
 * first-in first-out) is skipped for what it had replaced, as it would have put that back.
 */
function restorable(previous: Dispatcher): Dispatcher {
  let back = previous
  for (let earlier = installations.get(back); earlier !== undefined && !earlier.installed; earlier = installations.get(back)) {
    back = earlier.previous
  }
  return back
}

/**
 * `install(options?)`: put a `PoliteAgent` over the global dispatcher (the same paced
 * path as `politeInterceptor`, without `compose` and its per-request wrapping).
 *
 * Node 20's global `fetch` is Node's bundled undici, which reads the same global
 * dispatcher (`Symbol.for('undici.globalDispatcher.1')`) that this package's undici
 * sets, so it is paced too. If the bundled undici created that dispatcher first (a
 * `fetch` ran before this module loaded), it is an undici 6 Agent whose interceptors
 * speak an older handler API; it is not wrapped, a fresh undici 7 `Agent` takes its
 * place (pass `dispatcher` to choose another).
 */
export function install(options: InstallOptions = {}): Installed {
  checkPoliteOptionNames('install', options, ['dispatcher'])
  const previous = getGlobalDispatcher()
  const base = options.dispatcher ?? (previous instanceof Dispatcher ? previous : undefined)
  // Without a base, the agent makes (and on close, closes) its own Agent; a base stays
  // its owner's: the previous global one is put back by uninstall().
  const dispatcher = new PoliteAgent({ ...options, dispatcher: base })
  setGlobalDispatcher(dispatcher)
  const installation = { previous, installed: true }
  installations.set(dispatcher, installation)
  const uninstall = (): void => {
    if (!installation.installed) return
    installation.installed = false
    // Only undo our own installation: someone may have installed over it since.
    if (getGlobalDispatcher() === dispatcher) setGlobalDispatcher(restorable(previous))
  }
  return {
    limiter: dispatcher.limiter,
    dispatcher,
    uninstall,
    async close() {
      uninstall()
      await dispatcher.close()
      // As before politeAgent: the limiter is closed even when it was passed in.
      await dispatcher.limiter.close()
    },
  }
}
