// `politeAgent(options)`: an undici Dispatcher that paces every dispatch exactly as
// `politeInterceptor` does (same `createPacing`), without `Dispatcher.compose`. compose
// returns a Proxy whose every `dispatch` read goes through a trap, and wraps each
// callback-style handler (`request`'s, `fetch`'s) in a WrapHandler; at 64 concurrent
// requests on loopback that alone costs a plain Agent several percent of its
// throughput. Here the caller's handler reaches the paced path as it is, and the
// attempts go straight to the dispatcher underneath.
import { Agent, Dispatcher, errors } from 'undici'
import type { Limiter } from '../client/create-limiter.js'
import { checkPoliteOptionNames, createPacing, type Pacing, type PoliteOptions } from './pacing.js'

export interface PoliteAgentOptions extends PoliteOptions {
  /**
   * The dispatcher the attempts go through. It stays yours: closing the polite agent
   * does not close it. Default: a new undici `Agent` (built with `agent`), owned and
   * closed by the polite agent.
   */
  dispatcher?: Dispatcher
  /** Options of the default `Agent` (`connections`, `keepAliveTimeout`, …). Ignored with `dispatcher`. */
  agent?: Agent.Options
}

// The connection events of an Agent the polite agent owns are re-emitted on it, so
// code that watches the dispatcher it was given still sees them.
const FORWARDED_EVENTS = ['connect', 'disconnect', 'connectionError'] as const

/** The paced dispatcher; use it wherever undici takes a `dispatcher`. */
export class PoliteAgent extends Dispatcher {
  /** The limiter every dispatch goes through: `stats()`, `on(...)`. */
  readonly limiter: Limiter
  /** The dispatcher under the limiter: the attempts go there. */
  readonly dispatcher: Dispatcher
  readonly #pacing: Pacing
  readonly #dispatch: Dispatcher.Dispatch
  readonly #ownsDispatcher: boolean
  readonly #forwarders: [string, (...args: unknown[]) => void][] = []
  #closed = false
  #destroyed = false

  constructor(options: PoliteAgentOptions = {}) {
    super()
    checkPoliteOptionNames('politeAgent', options, ['dispatcher', 'agent'])
    this.#pacing = createPacing(options)
    this.limiter = this.#pacing.limiter
    this.#ownsDispatcher = options.dispatcher === undefined
    const inner = options.dispatcher ?? new Agent(options.agent)
    this.dispatcher = inner
    this.#dispatch = this.#pacing.pace(
      (opts, handler) => inner.dispatch(opts, handler),
      () => (this.#destroyed ? new errors.ClientDestroyedError() : this.#closed ? new errors.ClientClosedError() : undefined),
    )
    if (this.#ownsDispatcher) {
      for (const name of FORWARDED_EVENTS) {
        const forward = (...args: unknown[]): void => void this.emit(name as 'connect', ...(args as [URL, Dispatcher[]]))
        inner.on(name as 'connect', forward)
        this.#forwarders.push([name, forward])
      }
    }
  }

  get closed(): boolean {
    return this.#closed
  }

  get destroyed(): boolean {
    return this.#destroyed
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.#dispatch(opts, handler)
  }

  /**
   * Refuse new dispatches; requests still waiting in a lane, and attempts in flight,
   * reject with `ClosedError`, over a shared limiter too (pacer state is saved); stop telemetry; close the limiter
   * unless it was passed in (`options.limiter`), and the `Agent` unless it was passed
   * in. Idempotent: every call settles when the first one is done.
   */
  override close(): Promise<void>
  override close(callback: () => void): void
  override close(callback?: () => void): Promise<void> | void {
    const done = (this.#closing ??= this.#destroying ?? this.#closePacing().then(() => this.#owned()?.close()))
    if (callback === undefined) return done
    void done.then(callback, callback)
  }

  /** As `close()`, but an owned `Agent` is destroyed (its sockets cut, its requests failed with `error`). */
  override destroy(): Promise<void>
  override destroy(error: Error | null): Promise<void>
  override destroy(callback: () => void): void
  override destroy(error: Error | null, callback: () => void): void
  override destroy(errorOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const error = typeof errorOrCallback === 'function' ? null : (errorOrCallback ?? null)
    const after = typeof errorOrCallback === 'function' ? errorOrCallback : callback
    this.#destroyed = true
    const done = (this.#destroying ??= this.#closePacing().then(() => this.#owned()?.destroy(error)))
    if (after === undefined) return done
    void done.then(after, after)
  }

  #closing: Promise<void> | undefined
  #destroying: Promise<void> | undefined
  #pacingClosed: Promise<void> | undefined

  #closePacing(): Promise<void> {
    this.#closed = true
    return (this.#pacingClosed ??= this.#pacing.close(!this.#pacing.ownsLimiter).then(() => {
      for (const [name, forward] of this.#forwarders.splice(0)) this.dispatcher.off(name as 'connect', forward)
    }))
  }

  /** The dispatcher underneath when this agent made it (and so closes it). */
  #owned(): Dispatcher | undefined {
    return this.#ownsDispatcher ? this.dispatcher : undefined
  }
}

/** A `Dispatcher` that paces every request through the limiter (ATB per origin by default). */
export function politeAgent(options: PoliteAgentOptions = {}): PoliteAgent {
  return new PoliteAgent(options)
}
