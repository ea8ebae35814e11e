// What `politeInterceptor` and `politeAgent` share: the options, the limiter, the lane
// key of a dispatch, and `pace(dispatch)`, the undici dispatch function that sends
// every dispatch through the limiter with `dispatch` underneath. The interceptor hands
// `pace` to `Dispatcher.compose`; the agent calls it directly (no compose, no wrapping).
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici'
import { startClientTelemetry, type ClientTelemetryOptions } from '../client/client-telemetry.js'
import { createLimiter, type Limiter } from '../client/create-limiter.js'
import { ClosedError } from '../client/errors.js'
import { LIMITER_OPTION_NAMES, type LimiterOptions, type ResolvedClientOptions, resolveClientOptions } from '../client/options.js'
import { checkKnownOptions } from '../core/pacers/option-error.js'
import { RouteScopes } from '../core/scope.js'
import { originScope, readRawResponseSignalsAt } from './dispatch-request.js'
import { type CallerHandler, PacedDispatch, type PacingContext } from './paced-dispatch.js'
import { withSharedShape } from './dispatch-options.js'

export interface PoliteOptions extends LimiterOptions {
  /**
   * Share one limiter with `createClient` (or another interceptor or agent): same lanes,
   * same pacers. When given, the limiter options here are ignored.
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
   * A body the first attempt would consume (a stream, an async iterable: what `fetch` and the
   * SDKs on it send, JSON included) is read up to this many bytes before the first attempt
   * and replayed byte for byte; a longer one is sent once, not retried. @default 1_048_576 (1 MiB)
   */
  maxBodyBytes?: number
  /**
   * AATB: report this process's attempts and 429s to a telemetry endpoint
   * (`polite-fetch/server`) and pace from the fleet's aggregate; use with
   * `strategy: aatb()`. Reports go through a separate, unpaced undici Agent. Advisory
   * and fail-open: a slow or failing endpoint leaves the process pacing alone (ATB).
   */
  telemetry?: ClientTelemetryOptions
}

export interface Pacing {
  readonly limiter: Limiter
  /** Whether `limiter` was created here (not passed in through `options.limiter`). */
  readonly ownsLimiter: boolean
  /**
   * `dispatch` behind the limiter. `refusal`, asked per dispatch, returns the error a
   * dispatch fails with at once (a closed agent), in the caller's handler API.
   */
  pace(dispatch: Dispatcher.Dispatch, refusal?: () => Error | undefined): Dispatcher.Dispatch
  /**
   * Stop telemetry and its Agent; close the limiter too unless `keepLimiter` (then this shell's
   * unanswered dispatches reject with ClosedError). Dispatches still reading their body reject with it either way.
   */
  close(keepLimiter?: boolean): Promise<void>
}

const DEFAULT_DISCARD_MAX_BYTES = 64 * 1024

const POLITE_KEYS = { limiter: 1, scope: 1, discardMaxBytes: 1, maxBodyBytes: 1, telemetry: 1 } satisfies Record<Exclude<keyof PoliteOptions, keyof LimiterOptions>, 1>

/**
 * Throws, naming the nearest option, unless every key of `options` is one of the Node shells'
 * (`PoliteOptions`) or one of `own` (`dispatcher`, `agent`): a misspelt option is not ignored.
 */
export function checkPoliteOptionNames(shell: string, options: object, own: readonly string[] = []): void {
  checkKnownOptions(shell, options, [...LIMITER_OPTION_NAMES, ...Object.keys(POLITE_KEYS), ...own])
}

export function createPacing(options: PoliteOptions): Pacing {
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
  const { maxBodyBytes, giveUp } = resolveShellOptions(options)
  // Over a shared limiter, close() must end this shell's own dispatches (it cannot close the limiter).
  const live = options.limiter === undefined ? undefined : new Set<PacedDispatch>()
  // Dispatches whose body is being read are in no lane yet: close() ends them itself too.
  const reading = new Set<PacedDispatch>()
  const submit = (paced: PacedDispatch): void => {
    // The dispatch is the limiter's job and where its call ends: no promise, and on a
    // clean lane the attempt is dispatched before this returns.
    if (typeof limiter.submit === 'function') limiter.submit(paced, paced)
    else (limiter as Limiter).run(paced).then((attempt) => paced.resolve(attempt), (error: unknown) => paced.reject(error))
  }

  const pace = (dispatch: Dispatcher.Dispatch, refusal?: () => Error | undefined): Dispatcher.Dispatch => {
    const context: PacingContext = { dispatch, readSignals: readRawResponseSignalsAt, now, discardMaxBytes, learn, maxBodyBytes, giveUp, live }
    return function politeDispatch(given, handler) {
      const opts = withSharedShape(given)
      // Upgrades and CONNECT tunnels hold a socket, not a request/response: not paced.
      if (opts.upgrade || opts.method === 'CONNECT') return dispatch(opts, handler)
      const paced = new PacedDispatch(opts, handler as CallerHandler, context)
      // The caller's handler gets its abort now, so an abort during the lane wait
      // cancels the wait instead of waiting for a socket to abort on.
      paced.begin()
      if (paced.aborted) return true
      const refused = refusal?.()
      if (refused !== undefined) {
        paced.fail(refused)
        return false
      }
      try {
        paced.scope = scopeOf(opts)
      } catch (error) {
        paced.fail(error)
        return true
      }
      if (paced.bodyNeedsReading) {
        // Read before the lane (as the fetch shell reads a Request's body), so a retry can resend it.
        reading.add(paced)
        void paced.readBody().then((ready) => {
          reading.delete(paced)
          if (ready) submit(paced)
        })
        return true
      }
      submit(paced)
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

  return {
    limiter,
    ownsLimiter: options.limiter === undefined,
    pace,
    async close(keepLimiter = false) {
      telemetry?.stop()
      // As the limiter's own close() does for its calls: this shell's dispatches still reading
      // their body, and over a shared limiter its waiting and in-flight ones, reject with
      // ClosedError (through their abort, which takes them off their lane).
      const ended = keepLimiter && live !== undefined ? [...reading, ...live] : [...reading]
      for (const paced of ended) paced.abort(new ClosedError('polite-fetch: the dispatcher was closed', { request: paced.label }))
      if (!keepLimiter) await limiter.close()
      await telemetryAgent?.close()
    },
  }
}

/** The shell options checked as the fetch shell checks its own (`resolveClientOptions`). */
function resolveShellOptions(options: PoliteOptions): Pick<ResolvedClientOptions, 'maxBodyBytes' | 'giveUp'> {
  return resolveClientOptions({ maxBodyBytes: options.maxBodyBytes, giveUp: options.giveUp })
}

function defaultScope(routes: RouteScopes, opts: Dispatcher.DispatchOptions): string {
  const origin = originScope(opts.origin)
  return routes.size === 0 ? origin : routes.scopeFor(opts.method, origin, pathOf(opts.path))
}

function pathOf(path: string): string {
  const query = path.indexOf('?')
  return query === -1 ? path : path.slice(0, query)
}
