// The transport-agnostic engine behind every shell: `createClient` (fetch), the
// service worker and the undici interceptor all hand the limiter "jobs" whose
// attempts they know how to perform; the limiter owns lanes, pacing, retries,
// deadlines and events. Only `createClient` knows about Request/Response.
import type { Signal } from '../core/types.js'

/** What one attempt produced. */
export interface AttemptOutcome<T> {
  /** What the response (or failure) said, from `readSignals`. */
  signal: Signal
  /** The value the caller gets if this is the final attempt (a Response, undici data, …). */
  value: T
  /**
   * False when this attempt must not be retried whatever its signal says (a body that
   * cannot be replayed, a network error on a non-idempotent request); `reason` says why.
   */
  retryable: boolean
  reason?: string
  /** Release resources of a value that will be discarded because the job retries (e.g. cancel a body). */
  discard?(): void
}

export interface Job<T> {
  /** Quota scope (lane key), e.g. `https://api.example.com` or `https://api.example.com#products`. */
  scope: string
  /** Quota units one attempt costs (default 1). */
  cost?: number
  /** Caller's signal: aborting cancels queue waits, the attempt and retry waits. */
  signal?: AbortSignal
  /** Perform one attempt. `attemptSignal` aborts on caller abort or the per-attempt timeout. */
  attempt(attemptSignal: AbortSignal, attemptNumber: number): Promise<AttemptOutcome<T>>
  /** For events and errors: a description of the request (method + URL). */
  label?: string
}
