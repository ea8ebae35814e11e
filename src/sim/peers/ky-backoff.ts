// ky 2.x retry timing for the shared-quota harness: no pacing; a failed attempt waits
// `0.3 · 2^(n−1)` s (n = retry number from 1), capped by `backoffLimit` (default ∞), no
// jitter by default; for 413/429/503 a server timing wins: Retry-After, or else a reset
// time (RateLimit-Reset / X-RateLimit-Reset), clamped to `maxRetryAfter` (default ∞),
// never jittered. ky's own default `retry.limit` is 2; the harness retries without limit,
// so by default the count never restarts (set `limit` to model a caller that re-issues
// the call after ky gives up: the count restarts every `limit + 1` failures).
import type { Pacer, PacerInit, PacerState, Signal, Strategy } from '../../core/types.js'

export interface KyBackoffOptions {
  /** First retry delay. Default 300 ms. */
  baseDelayMs?: number
  /** Cap of the computed delay (ky `backoffLimit`). Default Infinity. */
  backoffLimitMs?: number
  /** ky `jitter: true`: full jitter U(0,1)·delay on computed delays. Default false. */
  jitter?: boolean
  /** Cap on a server-given delay (ky `maxRetryAfter`). Default Infinity. */
  maxRetryAfterMs?: number
  /** ky `retry.limit`; after it the count restarts (the caller calls again). Default Infinity. */
  limit?: number
  /** Use server timing for 429/503 (ky does). Default false; true models a ky that ignored it. */
  ignoreRetryAfter?: boolean
}

export const KY_BACKOFF_DEFAULTS: Required<KyBackoffOptions> = {
  baseDelayMs: 300,
  backoffLimitMs: Infinity,
  jitter: false,
  maxRetryAfterMs: Infinity,
  limit: Infinity,
  ignoreRetryAfter: false,
}

const KIND = 'ky'

export function kyBackoff(options: KyBackoffOptions = {}): Strategy {
  const o = { ...KY_BACKOFF_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) }
  return {
    name: KIND,
    create(init: PacerInit): Pacer {
      const random = init.random
      return {
        delayMs: () => 0,
        onSend: () => {},
        onResult: () => {},
        retryDelayMs(now, failures, signal: Signal) {
          const n = Number.isFinite(o.limit) ? ((Math.max(1, failures) - 1) % (o.limit + 1)) + 1 : Math.max(1, failures)
          if (n > o.limit) return 0
          const serverTimed = signal.status === 413 || signal.status === 429 || signal.status === 503
          if (serverTimed && !o.ignoreRetryAfter) {
            const at = signal.retryAt ?? signal.resetAt
            if (at !== undefined && Number.isFinite(at)) return Math.max(0, Math.min(at - now, o.maxRetryAfterMs))
          }
          let delay = Math.min(o.baseDelayMs * 2 ** Math.min(n - 1, 1000), o.backoffLimitMs)
          if (o.jitter) delay *= random()
          return delay
        },
        toJSON: (now): PacerState => ({ kind: KIND, version: 1, savedAt: now }),
        ratePerSecond: Infinity,
        tokens: () => Infinity,
      }
    },
  }
}
