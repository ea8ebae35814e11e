// The live lanes, one per scope: created on first use (resuming saved pacer state when
// a store is configured), each with at most one wake-up timer, and evicted once idle
// for `idleMs` (and, while it paces, for a few of its own spacings: idle-eviction.ts) so
// memory stays bounded however many scopes a client meets.
import type { Pacer, PacerState } from '../core/types.js'
import { mayEvict } from './idle-eviction.js'
import { Lane, type ScopeStats } from './lane.js'
import { LanePersistence } from './lane-persistence.js'
import type { ResolvedLimiterOptions } from './options.js'
import { cancelTimer, startTimer } from './timer.js'

function sweepFired(registry: LaneRegistry): void {
  registry.sweep()
}

function wakeFired(target: { registry: LaneRegistry; lane: Lane }): void {
  target.lane.wakeTimer = undefined
  target.registry.onWake(target.lane)
}

export class LaneRegistry {
  readonly #o: ResolvedLimiterOptions
  readonly lanes = new Map<string, Lane>()
  readonly persistence: LanePersistence | undefined
  /** Called when a lane's wake-up is due or its restored pacer is ready: the limiter pumps it. */
  readonly onWake: (lane: Lane) => void
  #sweepTimer: unknown = undefined
  #closed = false

  constructor(options: ResolvedLimiterOptions, onWake: (lane: Lane) => void) {
    this.#o = options
    this.onWake = onWake
    this.persistence =
      options.store === undefined
        ? undefined
        : new LanePersistence(options.store, options.storeKeyPrefix, options.clock, options.persistIntervalMs)
  }

  laneFor(scope: string, now: number): Lane {
    let lane = this.lanes.get(scope)
    if (lane !== undefined) return lane
    const persistence = this.persistence
    if (persistence === undefined) {
      lane = new Lane(scope, this.#createPacer(now, undefined), now)
    } else {
      // Calls queue until the saved state is back (or known absent): resuming a
      // congested scope with a fresh, unthrottled pacer would burst into its quota.
      lane = new Lane(scope, undefined, now)
      const restoring = lane
      void persistence.restore(scope).then((state) => {
        restoring.pacer = this.#createPacer(this.#o.clock.now(), state)
        this.onWake(restoring)
      })
    }
    // A lane refined out of its origin's (`origin#policy`, learned from the very response that
    // may have gated the origin's lane) starts behind the same gate: the server's Retry-After
    // was about this policy's requests.
    const hash = scope.indexOf('#')
    const parent = hash > 0 ? this.lanes.get(scope.slice(0, hash)) : undefined
    if (parent !== undefined && parent.gateUntil > now) {
      lane.gateUntil = parent.gateUntil
      lane.gateAnswer = parent.gateAnswer
    }
    this.lanes.set(scope, lane)
    // Not once closed: an attempt abandoned in flight may still answer, and a route split it
    // decides makes a lane, but a closed limiter starts no timers.
    if (this.#sweepTimer === undefined && !this.#closed) this.#sweepTimer = startTimer(this.#o.clock, this.#o.idleMs, sweepFired, this, true)
    return lane
  }

  #createPacer(now: number, state: PacerState | undefined): Pacer {
    const { strategy, random } = this.#o
    if (state !== undefined) {
      try {
        return strategy.create({ now, random, state })
      } catch {
        // State from another version or a hostile writer: start fresh rather than fail.
      }
    }
    return strategy.create({ now, random })
  }

  /**
   * Starts a new lane from what another lane's pacer learned (a route split off a lane takes
   * the congestion its 429s taught along, rather than bursting its backlog into its limit).
   */
  inheritPacer(lane: Lane, from: Lane, now: number): void {
    if (lane.pacer === undefined || from.pacer === undefined || lane.attempts > 0) return
    let state
    try {
      state = from.pacer.toJSON(now)
    } catch {
      return
    }
    lane.pacer = this.#createPacer(now, state)
  }

  scheduleWake(lane: Lane, at: number, now: number): void {
    if (this.#closed) return // nothing is pumped once closed
    if (lane.wakeTimer !== undefined) {
      if (lane.wakeAt === at) return
      cancelTimer(this.#o.clock, lane.wakeTimer)
    }
    lane.wakeAt = at
    lane.wakeTimer = startTimer(this.#o.clock, at - now, wakeFired, { registry: this, lane })
  }

  cancelWake(lane: Lane): void {
    if (lane.wakeTimer === undefined) return
    cancelTimer(this.#o.clock, lane.wakeTimer)
    lane.wakeTimer = undefined
  }

  /** The idle sweep is due: evicts the lanes idle long enough, and re-arms while any remain. */
  sweep(): void {
    this.#sweepTimer = undefined
    const now = this.#o.clock.now()
    for (const [scope, lane] of this.lanes) {
      if (!mayEvict(lane, now, this.#o.idleMs)) continue
      // Without a store, a lane still gated by a server's retryAt is kept: forgetting the
      // gate would let the next call go out before the server allows it.
      if (this.persistence === undefined && lane.gateUntil > now) continue
      this.cancelWake(lane)
      this.lanes.delete(scope)
      void this.persistence?.write(lane, now)
    }
    if (this.lanes.size > 0 && !this.#closed) {
      this.#sweepTimer = startTimer(this.#o.clock, this.#o.idleMs, sweepFired, this, true)
    }
  }

  stats(): ScopeStats[] {
    const now = this.#o.clock.now()
    const result: ScopeStats[] = []
    for (const lane of this.lanes.values()) result.push(lane.stats(now))
    return result
  }

  /** Stops every timer; the caller settles the calls. Resolves once pacer state is written. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#sweepTimer !== undefined) {
      cancelTimer(this.#o.clock, this.#sweepTimer)
      this.#sweepTimer = undefined
    }
    for (const lane of this.lanes.values()) this.cancelWake(lane)
    await this.persistence?.flushAll(this.lanes.values())
  }
}
