// Timers through the injected Clock. A clock may offer a callback-style fast path
// (`setTimer`/`clearTimer`, as systemClock does); any plain Clock works through
// `sleep` with an AbortController, which is what the tests' manual clock exercises.
import type { Clock } from '../core/types.js'

export interface TimerClock {
  /** Calls `fn(arg)` after `ms`; `weak` timers must not keep the process alive. Returns a handle. */
  setTimer?<A>(ms: number, fn: (arg: A) => void, arg: A, weak?: boolean): unknown
  clearTimer?(handle: unknown): void
}

export type AnyClock = Clock & TimerClock

/** Does nothing: for a promise whose failure is of no interest. */
export function noop(): void {}

/** Returns an opaque handle for `cancelTimer` (the clock's own handle, or an AbortController). */
export function startTimer<A>(clock: AnyClock, ms: number, fn: (arg: A) => void, arg: A, weak = false): unknown {
  if (clock.setTimer !== undefined && clock.clearTimer !== undefined) return clock.setTimer(ms, fn, arg, weak)
  const controller = new AbortController()
  // A sleep that resolved just before cancelTimer must not fire after it.
  clock.sleep(ms, controller.signal).then(() => {
    if (!controller.signal.aborted) fn(arg)
  }, noop)
  return controller
}

export function cancelTimer(clock: AnyClock, timer: unknown): void {
  if (timer instanceof AbortController) timer.abort()
  else clock.clearTimer?.(timer)
}
