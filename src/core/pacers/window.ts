// The paper's WB ("window-based backoff", WB.py): UB's per-request backoff plus a cap on
// the client's OWN successes in a sliding window (evaluation: 40 per 60 s), consulted
// before every attempt. Only successes count; failed attempts do not. A per-client cap
// cannot protect a shared quota (3 clients × 40/min > 80/min): it is a baseline.
import type { Pacer, PacerInit, PacerState, Strategy } from '../types.js'
import { createBackoff, resolveExponentialOptions, type ExponentialOptions } from './exponential.js'
import { finiteIn, matchingState, pastTimes } from './pacer-state.js'

export interface WindowOptions extends ExponentialOptions {
  /** Successes allowed per window. Default 40 (configs/WB/config_1.json). */
  limit?: number
  /** Sliding window length. Default 60 000 ms. */
  windowMs?: number
}

export const WINDOW_DEFAULTS = { limit: 40, windowMs: 60_000 }

const STATE_VERSION = 1

/** The paper's WB. Strategy name `window`. */
export function windowed(options: WindowOptions = {}): Strategy {
  const backoffOptions = resolveExponentialOptions(options)
  const limit = Math.max(1, Math.floor(options.limit ?? WINDOW_DEFAULTS.limit))
  const windowMs = Math.max(0, options.windowMs ?? WINDOW_DEFAULTS.windowMs)
  return {
    name: 'window',
    create(init: PacerInit): Pacer {
      const saved = matchingState(init.state, 'window', STATE_VERSION)
      const savedCap = finiteIn(saved?.capMs, backoffOptions.capMinMs, backoffOptions.capMaxMs)
      const backoff = createBackoff(backoffOptions, init.random, savedCap)
      // Success times, oldest first; only the newest `limit` can ever matter.
      let successes: number[] = pastTimes(saved?.successes, init.now, limit) ?? []

      const inWindow = (now: number): number[] => successes.filter((at) => at > now - windowMs)

      return {
        delayMs(now) {
          const recent = inWindow(now)
          if (recent.length < limit) return 0
          // The code sleeps until the oldest success leaves the window: min(s) + window − now.
          const oldest = recent[recent.length - limit] as number
          return Math.max(0, oldest + windowMs - now)
        },
        onSend() {},
        onResult(now, signal) {
          if (signal.kind !== 'ok') return
          successes.push(now)
          if (successes.length > limit) successes = successes.slice(successes.length - limit)
        },
        retryDelayMs: (now, failures, signal) => backoff.retryDelayMs(now, failures, signal),
        toJSON: (now: number): PacerState => ({
          kind: 'window',
          version: STATE_VERSION,
          savedAt: now,
          capMs: backoff.capMs,
          successes: inWindow(now),
        }),
        ratePerSecond: windowMs > 0 ? (limit * 1000) / windowMs : Infinity,
        tokens(now) {
          return Math.max(0, limit - inWindow(now).length)
        },
      }
    },
  }
}
