// The paper's UB ("unlimited backoff", UB.py): no pacing at all; a failed attempt waits
// U(0.1 s, min(2^n − 1 s, maxSleep)) before the retry, with n the request's failure count
// and maxSleep drawn once per client from U(30 s, 34 s). Both draws are rounded to 10 ms
// as the authors' code does (`round(x, 2)` seconds). Every benchmark compares against it,
// so the constants are the evaluation's and the shape is exactly the code's.
import type { Pacer, PacerInit, PacerState, Random, Signal, Strategy } from '../types.js'
import { finiteIn, matchingState, roundTo } from './pacer-state.js'

export interface ExponentialOptions {
  /** Lower bound of every backoff draw. Default 100 ms. */
  minDelayMs?: number
  /** Base of the growing upper bound `base · (2^n − 1)`. Default 1000 ms. */
  baseMs?: number
  /** The per-client cap is drawn once from U(capMinMs, capMaxMs). Default 30 000 ms. */
  capMinMs?: number
  /** Default 34 000 ms. */
  capMaxMs?: number
  /** Draws are rounded to this many ms (the code rounds seconds to 2 decimals). Default 10 ms; 0 = no rounding. */
  roundMs?: number
  /** Never retry earlier than the server's `Retry-After` (`signal.retryAt`). Default true. */
  honourRetryAfter?: boolean
  /** Wait after a transport failure (no response): the code sleeps 1 s. Default 1000 ms. */
  networkErrorDelayMs?: number
}

export const EXPONENTIAL_DEFAULTS: Required<ExponentialOptions> = {
  minDelayMs: 100,
  baseMs: 1000,
  capMinMs: 30_000,
  capMaxMs: 34_000,
  roundMs: 10,
  honourRetryAfter: true,
  networkErrorDelayMs: 1000,
}

const STATE_VERSION = 1

/** Per-request backoff shared by UB and WB. */
export interface Backoff {
  /** The cap drawn for this client. */
  readonly capMs: number
  retryDelayMs(now: number, failures: number, signal: Signal): number
}

function roundDraw(valueMs: number, roundMs: number): number {
  if (roundMs <= 0) return valueMs
  return roundTo(valueMs / roundMs, 0) * roundMs
}

/** UB's backoff for one client; `capMs` comes from a saved state or is drawn now. */
export function createBackoff(options: Required<ExponentialOptions>, random: Random, capMs?: number): Backoff {
  const { minDelayMs, baseMs, capMinMs, capMaxMs, roundMs, honourRetryAfter, networkErrorDelayMs } = options
  const cap = capMs ?? roundDraw(capMinMs + random() * (capMaxMs - capMinMs), roundMs)
  return {
    capMs: cap,
    retryDelayMs(now, failures, signal) {
      let delay: number
      if (signal.kind === 'error') {
        delay = networkErrorDelayMs
      } else {
        const n = Math.max(1, Math.floor(failures))
        // 2^n overflows to Infinity for huge n, which min() then turns into the cap.
        const upper = Math.min(baseMs * (2 ** n - 1), cap)
        const low = Math.min(minDelayMs, upper)
        delay = roundDraw(low + random() * (upper - low), roundMs)
      }
      if (honourRetryAfter && signal.retryAt !== undefined && Number.isFinite(signal.retryAt)) {
        delay = Math.max(delay, signal.retryAt - now)
      }
      return Math.max(0, delay)
    },
  }
}

export function resolveExponentialOptions(options: ExponentialOptions = {}): Required<ExponentialOptions> {
  const merged = { ...EXPONENTIAL_DEFAULTS }
  for (const key of Object.keys(EXPONENTIAL_DEFAULTS) as (keyof ExponentialOptions)[]) {
    const value = options[key]
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value
  }
  if (!(merged.capMaxMs >= merged.capMinMs)) merged.capMaxMs = merged.capMinMs
  return merged
}

/** The paper's UB: never paces; backs off per request. Strategy name `exponential`. */
export function exponential(options: ExponentialOptions = {}): Strategy {
  const resolved = resolveExponentialOptions(options)
  return {
    name: 'exponential',
    create(init: PacerInit): Pacer {
      const saved = matchingState(init.state, 'exponential', STATE_VERSION)
      const savedCap = finiteIn(saved?.capMs, resolved.capMinMs, resolved.capMaxMs)
      const backoff = createBackoff(resolved, init.random, savedCap)
      return {
        delayMs: () => 0,
        onSend: () => {},
        onResult: () => {},
        retryDelayMs: (now, failures, signal) => backoff.retryDelayMs(now, failures, signal),
        toJSON: (now: number): PacerState => ({
          kind: 'exponential',
          version: STATE_VERSION,
          savedAt: now,
          capMs: backoff.capMs,
        }),
        ratePerSecond: Infinity,
        tokens: () => Infinity,
      }
    },
  }
}
