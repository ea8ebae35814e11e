// A wall clock that runs `timeScale` times faster: the demo, the shared-quota
// benchmark and the simulator's live check compress a 5-minute scenario into
// seconds. Client and quota server read the SAME scaled clock, so every duration
// they exchange (Retry-After, RateLimit `t`, backoff) is in model time on both
// sides and nothing needs rescaling.
import type { Clock } from '../../core/types.js'

export interface ScaledClock extends Clock {
  readonly timeScale: number
  /** Model ms elapsed since the clock was made. */
  elapsedMs(): number
}

export function scaledClock(timeScale: number, startEpochMs = Date.now()): ScaledClock {
  if (!(Number.isFinite(timeScale) && timeScale > 0)) throw new RangeError(`timeScale must be positive, got ${timeScale}`)
  const origin = performance.now()
  const elapsedMs = (): number => (performance.now() - origin) * timeScale
  return {
    timeScale,
    elapsedMs,
    now: () => startEpochMs + elapsedMs(),
    sleep(ms: number, signal?: AbortSignal): Promise<void> {
      if (signal?.aborted) return Promise.reject(signal.reason)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(done, Math.max(0, ms) / timeScale)
        function done(): void {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        }
        function onAbort(): void {
          clearTimeout(timer)
          reject(signal?.reason)
        }
        signal?.addEventListener('abort', onAbort, { once: true })
      })
    },
  }
}
