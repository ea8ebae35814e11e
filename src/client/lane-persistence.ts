// Keeps lanes' pacer state in a Store across evictions, reloads and worker restarts.
// Writes are coalesced: a lane whose pacer changed is written at most once per
// `persistIntervalMs` (one limiter-wide timer, not one per lane), and right away when
// the lane is evicted or the limiter closes. A store that fails or hangs never blocks
// requests: a failed write is dropped, a failed or slow read starts the lane fresh.
import type { PacerState, Store } from '../core/types.js'
import type { Lane } from './lane.js'
import { type AnyClock, cancelTimer, noop, startTimer } from './timer.js'

/**
 * A restore slower than this (the scope's pending write and the read together) starts the lane
 * with a fresh pacer rather than hold its calls; close() waits no longer for its writes.
 */
export const RESTORE_TIMEOUT_MS = 1_000

function flushTimerFired(persistence: LanePersistence): void {
  persistence.flushDirty()
}

function isPacerState(value: unknown): value is PacerState {
  if (typeof value !== 'object' || value === null) return false
  const state = value as Partial<PacerState>
  return typeof state.kind === 'string' && typeof state.version === 'number'
}

export class LanePersistence {
  readonly #store: Store
  readonly #prefix: string
  readonly #clock: AnyClock
  readonly #intervalMs: number
  #timer: unknown = undefined
  readonly #dirty = new Set<Lane>()
  /** The last write per scope, so a lane re-created right after eviction reads what was written. */
  readonly #writes = new Map<string, Promise<void>>()

  constructor(store: Store, prefix: string, clock: AnyClock, intervalMs: number) {
    this.#store = store
    this.#prefix = prefix
    this.#clock = clock
    this.#intervalMs = intervalMs
  }

  async restore(scope: string): Promise<PacerState | undefined> {
    // The wait for the scope's last write counts against the same bound as the read: a write
    // that never settles (a hung IndexedDB) would otherwise hold the lane's calls for good.
    const pending = this.#writes.get(scope)
    const read = pending === undefined ? this.#store.get(this.#prefix + scope) : pending.then(() => this.#store.get(this.#prefix + scope))
    try {
      const value = await this.#bounded(read)
      return isPacerState(value) ? value : undefined
    } catch {
      return undefined
    }
  }

  /** `work`, or undefined once RESTORE_TIMEOUT_MS has passed without it. */
  async #bounded<T>(work: Promise<T>): Promise<T | undefined> {
    let timer: unknown
    const timeout = new Promise<undefined>((resolve) => {
      timer = startTimer(this.#clock, RESTORE_TIMEOUT_MS, resolve, undefined, true)
    })
    try {
      return await Promise.race([work, timeout])
    } finally {
      cancelTimer(this.#clock, timer)
    }
  }

  markDirty(lane: Lane): void {
    if (lane.dirty) return
    lane.dirty = true
    this.#dirty.add(lane)
    if (this.#timer === undefined) this.#timer = startTimer(this.#clock, this.#intervalMs, flushTimerFired, this, true)
  }

  /** The coalescing timer is due: writes the lanes changed since. */
  flushDirty(): void {
    this.#timer = undefined
    const now = this.#clock.now()
    for (const lane of this.#dirty) void this.write(lane, now)
    this.#dirty.clear()
  }

  write(lane: Lane, now: number): Promise<void> {
    lane.dirty = false
    this.#dirty.delete(lane)
    const pacer = lane.pacer
    if (pacer === undefined) return Promise.resolve()
    const scope = lane.scope
    let write: Promise<void>
    try {
      write = Promise.resolve(this.#store.set(this.#prefix + scope, pacer.toJSON(now))).catch(noop)
    } catch {
      return Promise.resolve()
    }
    this.#writes.set(scope, write)
    void write.then(() => {
      if (this.#writes.get(scope) === write) this.#writes.delete(scope)
    })
    return write
  }

  /** Writes every given lane now and waits for all pending writes (at most RESTORE_TIMEOUT_MS: a hung store must not hold close). */
  async flushAll(lanes: Iterable<Lane>): Promise<void> {
    if (this.#timer !== undefined) {
      cancelTimer(this.#clock, this.#timer)
      this.#timer = undefined
    }
    const now = this.#clock.now()
    for (const lane of lanes) void this.write(lane, now)
    this.#dirty.clear()
    await this.#bounded(Promise.all(this.#writes.values()))
  }
}
