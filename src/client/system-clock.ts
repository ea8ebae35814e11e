// The real clock: the one place in client/ that reads Date.now and sets timers.
// Epoch ms (not performance.now) because pacer state is persisted and shared with
// the service worker, whose performance.now origin resets on every restart.
import type { Clock } from '../core/types.js'
import type { TimerClock } from './timer.js'

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

/** Resolves after `ms`; rejects with the signal's reason when it aborts first (and clears the timer). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal))
  return new Promise<void>((resolve, reject) => {
    if (signal === undefined) {
      setTimeout(resolve, Math.max(0, ms))
      return
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(abortReason(signal))
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, Math.max(0, ms))
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

type TimeoutHandle = ReturnType<typeof setTimeout>

/** The real clock, with the timer fast path the limiter uses. */
export type SystemClock = Clock & Required<TimerClock>

export const systemClock: SystemClock = {
  now: () => Date.now(),
  sleep,
  // The limiter's own timers take this callback-style fast path: no promise, no
  // AbortController and no closure per timer on the hot path.
  setTimer<A>(ms: number, fn: (arg: A) => void, arg: A, weak?: boolean): unknown {
    const handle: TimeoutHandle = setTimeout(fn, Math.max(0, ms), arg)
    // Housekeeping timers (idle sweep, persistence) must not keep a Node process alive.
    if (weak === true && typeof (handle as { unref?: () => void }).unref === 'function') {
      ;(handle as unknown as { unref: () => void }).unref()
    }
    return handle
  },
  clearTimer(handle: unknown): void {
    clearTimeout(handle as TimeoutHandle)
  },
}
