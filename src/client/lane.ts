// One lane per quota scope: the calls waiting for it (in order), its pacer, how many
// of its attempts are in flight, and the gate a server's retryAt put on it. The lane
// is plain state; the limiter (create-limiter.ts) moves calls through it.
import type { Pacer } from '../core/types.js'
import type { Call } from './call.js'
import type { AttemptOutcome } from './limiter-types.js'
import { LaneQueue } from './lane-queue.js'
import type { LaneRouteRecord } from './route-splitter.js'

export interface ScopeStats {
  scope: string
  /** Rate the pacer currently allows (units per second); Infinity when not pacing. */
  ratePerSecond: number
  /** Tokens the pacer has now; Infinity when not pacing. */
  tokens: number
  /** Calls waiting (fresh and retries). */
  queued: number
  inFlight: number
  /** Attempts sent, retries included. */
  attempts: number
  /** Attempts answered with a throttled signal (429). */
  throttled: number
  /** Attempts answered with an overloaded signal (503). */
  overloaded: number
  /** Attempts that failed without a response. */
  errors: number
  /** Attempts answered with an `ok` signal. */
  successes: number
  retries: number
  /** Calls that ended without success (gave up, rejected or returned a final failure). */
  giveUps: number
  /** Epoch ms the lane is gated until by a server's retryAt (0 when not gated). */
  gateUntil: number
}

export class Lane {
  readonly scope: string
  /** Undefined while the lane's saved state is being restored from the store. */
  pacer: Pacer | undefined
  readonly queue = new LaneQueue<Call<unknown>>()
  inFlight = 0
  /** Epoch ms before which nothing is sent (server retryAt plus jitter). */
  gateUntil = 0
  /** Pending wake-up of the lane's pump, and when it fires. */
  wakeTimer: unknown = undefined
  wakeAt = 0
  /**
   * The latest "nothing queued goes before" bound the queue was swept against (calls with an
   * earlier deadline were ended), so a pump that finds the same bound does not walk the queue again.
   */
  hopelessBefore = 0
  /**
   * The response whose retryAt raised `gateUntil`, when its shell can hand it out again
   * (`AttemptOutcome.gaveUp`): with `giveUp: 'response'`, a call the gate puts past its deadline
   * is answered with a copy of it, the server's word for that call too.
   */
  gateAnswer: AttemptOutcome<unknown> | undefined = undefined
  /** Epoch ms of the last call admitted or attempt settled; drives idle eviction. */
  lastActiveAt: number
  /** Pacer state changed since it was last written to the store. */
  dirty = false
  attempts = 0
  throttled = 0
  overloaded = 0
  errors = 0
  successes = 0
  retries = 0
  giveUps = 0
  /**
   * Recent outcomes by route, kept from the lane's first 429 until a quiet window passes, so
   * a route with a limit of its own can be told apart (route-splitter.ts). None on the clean path.
   */
  routeRecord: LaneRouteRecord | undefined = undefined

  /** Epoch ms the lane was made: with `attempts`, the mean spacing of its own traffic (idle-eviction.ts). */
  readonly createdAt: number

  constructor(scope: string, pacer: Pacer | undefined, now: number) {
    this.scope = scope
    this.pacer = pacer
    this.lastActiveAt = now
    this.createdAt = now
  }

  isIdle(): boolean {
    return this.queue.size === 0 && this.inFlight === 0
  }

  stats(now: number): ScopeStats {
    const pacer = this.pacer
    return {
      scope: this.scope,
      ratePerSecond: pacer === undefined ? Infinity : pacer.ratePerSecond,
      tokens: pacer === undefined ? Infinity : pacer.tokens(now),
      queued: this.queue.size,
      inFlight: this.inFlight,
      attempts: this.attempts,
      throttled: this.throttled,
      overloaded: this.overloaded,
      errors: this.errors,
      successes: this.successes,
      retries: this.retries,
      giveUps: this.giveUps,
      gateUntil: this.gateUntil > now ? this.gateUntil : 0,
    }
  }
}
