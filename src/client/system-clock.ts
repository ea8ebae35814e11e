// The real clock: the one place in client/ that reads Date.now and sets timers.
// Epoch ms (not performance.now) because pacer state is persisted and shared with
// the service worker, whose performance.now origin resets on every restart. But never
// backwards: see epochNow.
import { type Clock, MAX_TIMEOUT_MS } from '../core/types.js'
import type { TimerClock } from './timer.js'

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

// Beyond MAX_TIMEOUT_MS a 30-day deadline would expire at once and a lane gated that far ahead
// would wake every millisecond: longer timers are chained in steps of that size.
export { MAX_TIMEOUT_MS }

type TimeoutHandle = ReturnType<typeof setTimeout>

// The last reading; and while the wall clock is behind it (after a step back), the reading it
// counts on from and performance.now's reading then (undefined otherwise).
let lastNow = -Infinity
let carriedFrom: number | undefined
let carriedFromMonoMs = 0

/**
 * Date.now that never goes back. Every deadline, gate and pacing time is an instant on this
 * clock; when the wall clock is set back by J (by hand, an NTP step, a VM restored), those
 * instants would all lie J further ahead: each lane stalled and no call reached its deadline for
 * J longer (hours, for a clock set back by hours). After such a step the clock counts on from its
 * last reading by the monotonic clock (performance.now), J ahead of the wall clock, until the wall
 * clock reaches it again (set right, or caught up); the time between that last reading and the
 * step is not known, so a timer due then fires that much later, at most its own length. A step
 * forward, or a sleep, passes through. The usual path reads Date.now alone (performance.now
 * doubled the cost of a reading, on the hot path). Module-wide: one clock per page, worker or process.
 */
function epochNow(): number {
  const wall = Date.now()
  if (carriedFrom === undefined && wall >= lastNow) return (lastNow = wall)
  const monoMs = globalThis.performance?.now() ?? 0
  if (carriedFrom === undefined) {
    carriedFrom = lastNow
    carriedFromMonoMs = monoMs
  }
  const carried = carriedFrom + Math.max(0, Math.floor(monoMs - carriedFromMonoMs))
  if (wall >= carried) {
    carriedFrom = undefined
    return (lastNow = wall)
  }
  return (lastNow = carried)
}

/** A timer longer than MAX_TIMEOUT_MS: one setTimeout per step, `handle` always the current one. */
class LongTimer<A> {
  handle: TimeoutHandle
  readonly #dueAt: number
  readonly #fn: (arg: A) => void
  readonly #arg: A
  readonly #weak: boolean

  constructor(ms: number, fn: (arg: A) => void, arg: A, weak: boolean) {
    this.#dueAt = epochNow() + ms
    this.#fn = fn
    this.#arg = arg
    this.#weak = weak
    this.handle = this.#arm(ms)
  }

  #arm(ms: number): TimeoutHandle {
    const long = ms > MAX_TIMEOUT_MS
    const handle = setTimeout(() => {
      if (long) this.handle = this.#arm(Math.max(0, this.#dueAt - epochNow()))
      else this.#fn(this.#arg)
    }, long ? MAX_TIMEOUT_MS : ms)
    return weakly(handle, this.#weak)
  }
}

/** Housekeeping timers (idle sweep, persistence) must not keep a Node process alive. */
function weakly(handle: TimeoutHandle, weak: boolean): TimeoutHandle {
  if (weak && typeof (handle as { unref?: () => void }).unref === 'function') {
    ;(handle as unknown as { unref: () => void }).unref()
  }
  return handle
}

function setTimer<A>(ms: number, fn: (arg: A) => void, arg: A, weak?: boolean): unknown {
  const delayMs = Math.max(0, ms)
  if (delayMs > MAX_TIMEOUT_MS) return new LongTimer(delayMs, fn, arg, weak === true)
  return weakly(setTimeout(fn, delayMs, arg), weak === true)
}

function clearTimer(handle: unknown): void {
  clearTimeout(handle instanceof LongTimer ? handle.handle : (handle as TimeoutHandle))
}

/**
 * A `sleep` on a pair of timer functions: resolves after `ms`; rejects with the signal's reason
 * when it aborts first (and clears the timer).
 */
export function sleepOn(set: typeof setTimer, clear: (handle: unknown) => void): (ms: number, signal?: AbortSignal) => Promise<void> {
  return (ms, signal) => {
    if (signal?.aborted) return Promise.reject(abortReason(signal))
    return new Promise<void>((resolve, reject) => {
      if (signal === undefined) {
        set(ms, resolve, undefined)
        return
      }
      const onAbort = (): void => {
        clear(timer)
        reject(abortReason(signal))
      }
      const timer = set(ms, () => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, undefined)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }
}

/** The real clock, with the timer fast path the limiter uses. */
export type SystemClock = Clock & Required<TimerClock>

export const systemClock: SystemClock = {
  now: epochNow,
  sleep: sleepOn(setTimer, clearTimer),
  // The limiter's own timers take this callback-style fast path: no promise, no
  // AbortController and no closure per timer on the hot path.
  setTimer,
  clearTimer,
}
