// `politeInterceptor(options)`: an undici interceptor (for `Dispatcher.compose`) that
// sends every dispatch through the same lanes and pacers as `createClient`. A dispatch
// waits in its lane, is sent, its response head becomes a Signal; a retryable 429/503
// is drained and the dispatch goes back to the head of its lane (never before
// Retry-After); anything else is handed to the caller's handler untouched.
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici'
import { startClientTelemetry, type ClientTelemetryOptions } from '../client/client-telemetry.js'
import { createLimiter, type Limiter } from '../client/create-limiter.js'
import type { LimiterOptions } from '../client/options.js'
import { RouteScopes } from '../core/scope.js'
import { originScope, readRawResponseSignals } from './dispatch-request.js'
import { type CallerHandler, PacedDispatch, type PacingContext } from './paced-dispatch.js'

export interface PoliteInterceptorOptions extends LimiterOptions {
  /**
   * Share one limiter with `createClient` (or another interceptor): same lanes, same
   * pacers. When given, the limiter options here are ignored.
   */
  limiter?: Limiter
  /** Lane key of a dispatch. Default: its origin (`https://api.example.com`). */
  scope?(opts: Dispatcher.DispatchOptions): string
  /**
   * A discarded 429/503 body is drained so the connection stays reusable, up to this
   * many bytes; past it the connection is dropped instead. Default 64 KiB.
   */
  discardMaxBytes?: number
  /**
   * AATB: report this process's attempts and 429s to a telemetry endpoint
   * (`polite-fetch/server`) and pace from the fleet's aggregate; use with
   * `strategy: aatb()`. Reports go through a separate, unpaced undici Agent. Advisory
   * and fail-open: a slow or failing endpoint leaves the process pacing alone (ATB).
   */
  telemetry?: ClientTelemetryOptions
}

/** The interceptor, with the limiter it paces through (stats, events). */
export interface PoliteInterceptor extends Dispatcher.DispatcherComposeInterceptor {
  readonly limiter: Limiter
  /** Stop telemetry and close the limiter (waiting requests reject with ClosedError; pacer state is saved). */
  close(): Promise<void>
}

const DEFAULT_DISCARD_MAX_BYTES = 64 * 1024

export function politeInterceptor(options: PoliteInterceptorOptions = {}): PoliteInterceptor {
  const limiter = options.limiter ?? createLimiter(options)
  // As createClient does: one lane per origin, refined to `origin#policy` for routes whose
  // responses named the policy they draw on (unless the caller chose the lanes).
  const routes = options.scope ? undefined : new RouteScopes()
  const scopeOf = options.scope ?? ((opts: Dispatcher.DispatchOptions) => defaultScope(routes!, opts))
  const learn = routes && ((opts: Dispatcher.DispatchOptions, policy: string) =>
    routes.learn(opts.method, originScope(opts.origin), pathOf(opts.path), policy))
  // The limiter's clock when given (tests inject one), so retryAt and the lane agree on time.
  const clock = options.clock
  const now = clock ? () => clock.now() : Date.now
  const discardMaxBytes = options.discardMaxBytes ?? DEFAULT_DISCARD_MAX_BYTES

  const interceptor = (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch => {
    const context: PacingContext = { dispatch, readSignals: readRawResponseSignals, now, discardMaxBytes, learn }
    return function politeDispatch(opts, handler) {
      // Upgrades and CONNECT tunnels hold a socket, not a request/response: not paced.
      if (opts.upgrade || opts.method === 'CONNECT') return dispatch(opts, handler)
      const paced = new PacedDispatch(opts, handler as CallerHandler, context)
      // The caller's handler gets its abort now, so an abort during the lane wait
      // cancels the wait instead of waiting for a socket to abort on.
      paced.begin()
      if (paced.aborted) return true
      try {
        paced.scope = scopeOf(opts)
      } catch (error) {
        paced.fail(error)
        return true
      }
      // The dispatch is the limiter's job and where its call ends: no promise, and on a
      // clean lane the attempt is dispatched before this returns.
      if (typeof limiter.submit === 'function') limiter.submit(paced, paced)
      else (limiter as Limiter).run(paced).then((attempt) => paced.resolve(attempt), (error: unknown) => paced.reject(error))
      // Queued, not refused: undici's back-pressure ("busy, wait for drain") does not apply.
      return true
    }
  }
  let telemetryAgent: Agent | undefined
  const telemetry =
    options.telemetry === undefined
      ? undefined
      : startClientTelemetry(options.telemetry, limiter, now, ((input: string, init?: RequestInit) =>
          // Never through the paced dispatcher (after install(), the global fetch is paced).
          undiciFetch(input, { ...(init as object), dispatcher: (telemetryAgent ??= new Agent()) })) as unknown as typeof fetch)
  const close = async (): Promise<void> => {
    telemetry?.stop()
    await limiter.close()
    await telemetryAgent?.close()
  }
  return Object.assign(interceptor, { limiter, close })
}

function defaultScope(routes: RouteScopes, opts: Dispatcher.DispatchOptions): string {
  const origin = originScope(opts.origin)
  return routes.size === 0 ? origin : routes.scopeFor(opts.method, origin, pathOf(opts.path))
}

function pathOf(path: string): string {
  const query = path.indexOf('?')
  return query === -1 ? path : path.slice(0, query)
}
