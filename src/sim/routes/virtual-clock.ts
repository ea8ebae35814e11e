// Virtual time for the shipped client (createClient and its limiter), which is
// promise- and timer-driven where the grid's engine is synchronous. Timers sit in a
// heap in virtual time; `run` fires the earliest, then lets every promise chain it
// started settle (one macrotask turn: Node empties the microtask queue before the next
// one) before time moves on, so the client sees the time its timers were set for and
// no wall time passes. Deterministic: ties fire in the order they were set.
import type { Clock } from '../../core/types.js'
import type { TimerClock } from '../../client/timer.js'
import { EventQueue } from '../event-queue.js'

interface Timer {
  at: number
  seq: number
  fn: ((arg: unknown) => void) | undefined
  arg: unknown
  weak: boolean
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export class VirtualClock implements Clock, TimerClock {
  #now: number
  readonly #queue = new EventQueue<Timer>()
  /** Timers that keep the run going (not housekeeping), set and not yet fired or cleared. */
  #strong = 0

  constructor(startMs: number) {
    this.#now = startMs
  }

  now(): number {
    return this.#now
  }

  setTimer<A>(ms: number, fn: (arg: A) => void, arg: A, weak?: boolean): unknown {
    const timer: Timer = { at: this.#now + Math.max(0, ms), seq: 0, fn: fn as (arg: unknown) => void, arg, weak: weak === true }
    if (!timer.weak) this.#strong++
    this.#queue.push(timer)
    return timer
  }

  clearTimer(handle: unknown): void {
    const timer = handle as Timer
    if (timer.fn === undefined) return
    timer.fn = undefined
    if (!timer.weak) this.#strong--
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise<void>((resolve, reject) => {
      const timer = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, undefined)
      const onAbort = (): void => {
        this.clearTimer(timer)
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /**
   * Fires timers in time order until `done()` holds, only housekeeping timers are left, or
   * virtual time would pass `untilMs`. Returns false when it stopped at `untilMs`.
   */
  async run(done: () => boolean, untilMs: number): Promise<boolean> {
    await turn()
    for (;;) {
      if (done()) return true
      const timer = this.#queue.pop()
      if (timer === undefined) return true
      if (timer.fn === undefined) continue
      if (timer.at > untilMs) {
        this.#queue.push(timer)
        return false
      }
      if (timer.weak && this.#strong === 0) {
        // Nothing but housekeeping is left: no call is waiting for time to pass.
        this.#queue.push(timer)
        return true
      }
      if (timer.at > this.#now) this.#now = timer.at
      const fn = timer.fn
      timer.fn = undefined
      if (!timer.weak) this.#strong--
      fn(timer.arg)
      await turn()
    }
  }
}
