// What the limiter tells observers, typed per event. Listeners are plain functions
// kept in copy-on-write arrays (unsubscribing while an event is being delivered is
// safe), and emitting with no listener costs one array-length check on the hot path.
import type { GiveUpReason } from '../core/retry-policy.js'
import type { SignalKind } from '../core/types.js'

interface CallEvent {
  scope: string
  /** The job's label (method + URL for fetch), when it has one. */
  label: string | undefined
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number
}

/** An attempt is being sent now. */
export interface AttemptEvent extends CallEvent {
  /** How long this attempt waited in the lane (queue, pacing, retry wait), in ms. */
  waitedMs: number
}

/** An attempt came back throttled (429) or overloaded (503). */
export interface ThrottledEvent extends CallEvent {
  kind: 'throttled' | 'overloaded'
  status: number
  /** Epoch ms the server asked us to wait until, when it said. */
  retryAt: number | undefined
}

/** A call will try again. */
export interface RetryEvent extends CallEvent {
  /** Why the last attempt failed. */
  reason: SignalKind
  status: number
  /** Epoch ms before which the retry will not be sent. */
  notBefore: number
  /** notBefore - now. */
  delayMs: number
  retryAt: number | undefined
}

/** A lane's allowed rate changed. */
export interface RateEvent {
  scope: string
  ratePerSecond: number
  previousPerSecond: number
}

/** A call ends without a successful response: it returns the last response, or rejects. */
export interface GiveUpEvent extends CallEvent {
  reason: GiveUpReason | string
  /** Status of the last response (0 when there was none or no attempt was made). */
  status: number
  retryAt: number | undefined
}

/**
 * A route was judged, from status codes alone, to have a limit of its own (its 429s piled up
 * while the lane's other routes kept succeeding) and now has a lane of its own.
 */
export interface SplitEvent {
  /** The lane the route left (its origin's). */
  scope: string
  /** The route's lane from now on: `scope#policy`. */
  splitScope: string
  /** Method and path template, e.g. `POST /products`. */
  route: string
  /** The synthetic policy name, e.g. `~route:POST /products`. */
  policy: string
  /** The route's 429s among its recent answers (counted, not timed) when it was split. */
  throttled: number
  /** Successes of the lane's other routes since the route's first recent 429. */
  otherSuccesses: number
}

export interface LimiterEvents {
  attempt: AttemptEvent
  throttled: ThrottledEvent
  retry: RetryEvent
  rate: RateEvent
  'give-up': GiveUpEvent
  split: SplitEvent
}

export type LimiterEventName = keyof LimiterEvents
export type Listener<E extends LimiterEventName> = (event: LimiterEvents[E]) => void

type ListenerTable = { [E in LimiterEventName]: Listener<E>[] }

export class LimiterEmitter {
  readonly #listeners: ListenerTable = { attempt: [], throttled: [], retry: [], rate: [], 'give-up': [], split: [] }

  on<E extends LimiterEventName>(event: E, listener: Listener<E>): () => void {
    if (!(event in this.#listeners)) throw new TypeError(`polite-fetch: unknown event \`${String(event)}\``)
    if (typeof listener !== 'function') throw new TypeError('polite-fetch: a listener must be a function')
    const table = this.#listeners as unknown as Record<E, Listener<E>[]>
    table[event] = [...table[event], listener]
    return () => {
      table[event] = table[event].filter((fn) => fn !== listener)
    }
  }

  has(event: LimiterEventName): boolean {
    return this.#listeners[event].length > 0
  }

  emit<E extends LimiterEventName>(event: E, payload: LimiterEvents[E]): void {
    const list = (this.#listeners as unknown as Record<E, Listener<E>[]>)[event]
    for (const listener of list) {
      try {
        listener(payload)
      } catch (error) {
        // A failing observer must not break the request it observes; surface it the way
        // EventTarget does: as an uncaught error, outside the limiter's control flow.
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }
}
