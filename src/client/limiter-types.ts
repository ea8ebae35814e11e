// The transport-agnostic engine behind every shell: `createClient` (fetch), the
// service worker and the undici interceptor all hand the limiter "jobs" whose
// attempts they know how to perform; the limiter owns lanes, pacing, retries,
// deadlines and events. Only `createClient` knows about Request/Response.
import type { Signal } from '../core/types.js'

/**
 * What a call that polite-fetch stops retrying after a response ends with: `'throw'` rejects
 * with the typed error (`DeadlineError`, `RetryBudgetError`, `RetryAfterTooLongError`);
 * `'response'` resolves with the server's last 429/503, marked (see `AttemptOutcome.gaveUp`).
 */
export type GiveUpMode = 'response' | 'throw'

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
  /**
   * Release resources of a value that will be discarded because the job retries (e.g. cancel a body).
   * Called as a method (`outcome.discard()`), so a shared function can read `this.value`.
   */
  discard?(): void
  /**
   * True when someone upstream already paced this attempt (our service worker marks its
   * responses): the outcome is final and is not fed to this limiter's pacer.
   */
  neutral?: boolean
  /**
   * The value the caller gets when the limiter stops retrying after this response and the call
   * gives up with `giveUp: 'response'` (deadline, retry budget, a too-long Retry-After): the
   * response itself, marked with the reason and `retryAt` (`x-polite-fetch-give-up`). May be
   * asked after `discard()` (the call gave up while waiting for its retry): the value then has
   * the response's status and headers and no body. With `copy`, for another call of the lane
   * this response gated past its deadline: a new value, status and headers only, each time.
   * Absent: such give-ups reject.
   */
  gaveUp?(reason: string, retryAt: number | undefined, copy?: boolean): T
  /** Not a failure: what tells an outcome from an `AttemptFailure` (see create-limiter.ts). */
  readonly failed?: false
}

/** How a `start`-style attempt reports back; exactly one call per attempt (later ones are ignored). */
export interface AttemptReport<T> {
  /** The attempt produced an outcome (a response). */
  done(outcome: AttemptOutcome<T>): void
  /** The attempt failed without an outcome (a transport error): as a rejected `attempt` promise. */
  failed(error: unknown): void
}

/** Where `Limiter.submit` delivers a call's end: exactly one of the two, once. */
export interface Settlement<T> {
  resolve(value: T): void
  reject(error: unknown): void
}

export interface Job<T> {
  /** Quota scope (lane key), e.g. `https://api.example.com` or `https://api.example.com#products`. */
  scope: string
  /** Quota units one attempt costs (default 1). */
  cost?: number
  /** Caller's signal: aborting cancels queue waits, the attempt and retry waits. */
  signal?: AbortSignal
  /**
   * Perform one attempt. A rejection is a transport failure (an `error` signal with status 0): it is
   * retried only when `retryErrors` is true, otherwise the call rejects with it.
   *
   * `attemptSignal` aborts the attempt. With a per-attempt `timeoutMs` it is the attempt's own signal
   * (aborted by the caller's signal, the timeout, the deadline or close()); otherwise, to keep the
   * hot path free of per-attempt AbortControllers (costly on Node 20), it is the caller's own
   * signal when there is one, else a signal shared by the limiter's attempts that aborts on
   * close() — so listeners added to it must be removed when the attempt ends. Without a timeout,
   * an attempt still in flight at the deadline is abandoned (the call rejects at once) rather than
   * cancelled. `undefined` is passed only to jobs that set `optionalAttemptSignal`.
   */
  attempt(attemptSignal: AbortSignal | undefined, attemptNumber: number): Promise<AttemptOutcome<T>>
  /**
   * Optional callback-style `attempt`, preferred when present: start the attempt and tell
   * `report` its outcome (`done`) or failure (`failed`) later. No promise per attempt; a
   * shell whose transport is callback-based (undici) keeps its hot path allocation-free.
   * A report made synchronously inside `start` is handled on a microtask, so `start` never
   * re-enters the limiter.
   */
  start?(attemptSignal: AbortSignal | undefined, attemptNumber: number, report: AttemptReport<T>): void
  /**
   * The job accepts `undefined` for `attemptSignal` when nothing but the limiter's close() could
   * abort the attempt (fetch, for one, must not be handed a long-lived shared signal: each request
   * adds a listener to it that is only removed when the request is garbage collected).
   */
  optionalAttemptSignal?: boolean
  /** For events and errors: a description of the request (method + URL). */
  label?: string
  /**
   * Whether `error` outcomes (network failures, attempt timeouts) may be retried. Shells set it
   * from method idempotency or an `Idempotency-Key`. Default false: a failed non-idempotent
   * request may have been processed, so sending it again is not ours to decide.
   */
  retryErrors?: boolean
  /**
   * The job's verdict on an attempt that failed without a response: a give-up reason when sending
   * again cannot help (the request itself is invalid: a bad header name, a forbidden method), so
   * the caller gets the error at once instead of after retries until its deadline; undefined
   * leaves the failure to `retryErrors`. Asked only on the failure path.
   */
  finalFailure?(error: unknown): string | undefined
  /** Higher runs first among queued calls of the same lane (default 0). Retries keep their place. */
  priority?: number
  /** Overrides the limiter's `deadlineMs` for this call. */
  deadlineMs?: number
  /** Overrides the limiter's `retryBudget` for this call. */
  retryBudget?: number
  /** Overrides the limiter's `giveUp` for this call. */
  giveUp?: GiveUpMode | undefined
  /**
   * The job's route within its lane (method + path template, e.g. `POST /products/:id`), when
   * the lane may learn from status codes that the route has a limit of its own (see
   * core/route-split.ts). Read only once the lane has seen a 429. Undefined opts out.
   */
  readonly route?: string
  /**
   * The limiter moved this job's route to a lane of its own, `scope#policy`: later jobs of
   * the route must use that scope. Without it, `route` is ignored.
   */
  learnRoute?(policy: string): void
}
