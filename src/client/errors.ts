// Typed failures of a paced call. Aborts are NOT wrapped: like fetch, a call whose
// signal aborts rejects with `signal.reason`. Everything else that ends a call
// early is one small class here, each carrying what the caller needs to act: the
// request's label, the epoch ms at which the server would accept again (`retryAt`)
// and the underlying `cause`.
import type { Signal } from '../core/types.js'

/** Checked instead of `instanceof` so errors from another realm or bundle copy still match. */
const BRAND = Symbol.for('polite-fetch.error')

export interface PoliteFetchErrorOptions {
  /** Description of the request (method + URL), when known. */
  request?: string | undefined
  cause?: unknown
  /** Epoch ms at which the server (or the lane's pacer) would accept an attempt again. */
  retryAt?: number | undefined
  /** What the last attempt's response said, when there was one. */
  signal?: Signal | undefined
  /** Attempts made before giving up. */
  attempts?: number | undefined
}

export class PoliteFetchError extends Error {
  override name = 'PoliteFetchError'
  readonly request: string | undefined
  readonly retryAt: number | undefined
  readonly signal: Signal | undefined
  readonly attempts: number
  readonly [BRAND] = true

  constructor(message: string, options: PoliteFetchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.request = options.request
    this.retryAt = options.retryAt
    this.signal = options.signal
    this.attempts = options.attempts ?? 0
  }

  static is(value: unknown): value is PoliteFetchError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
  }
}

/** The call's total deadline (`deadlineMs`) passed, or the next possible attempt lies beyond it. */
export class DeadlineError extends PoliteFetchError {
  override name = 'DeadlineError'
}

/** The server asked us to wait longer than `maxRetryAfterMs`: failing fast instead of sleeping for hours. */
export class RetryAfterTooLongError extends PoliteFetchError {
  override name = 'RetryAfterTooLongError'
}

/** The lane's queue already holds `maxQueue` waiting calls. */
export class QueueFullError extends PoliteFetchError {
  override name = 'QueueFullError'
}

/** The call used up its `retryBudget` and the last attempt still asked for a retry. */
export class RetryBudgetError extends PoliteFetchError {
  override name = 'RetryBudgetError'
}

/** The limiter was closed while the call waited, or before it started. */
export class ClosedError extends PoliteFetchError {
  override name = 'ClosedError'
}
