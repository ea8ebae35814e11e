// Errors across the tab channel: the leader's limiter rejects a follower's call with a
// typed error (DeadlineError, RetryBudgetError, …); the follower rejects its caller with
// the same class, fields included, so a caller cannot tell whether its lane was led here.
import {
  ClosedError,
  DeadlineError,
  PoliteFetchError,
  QueueFullError,
  RetryAfterTooLongError,
  RetryBudgetError,
} from '../client/errors.js'
import type { ErrorData } from '../protocol/tab-messages.js'

const TYPED: Record<string, typeof PoliteFetchError> = {
  DeadlineError,
  RetryAfterTooLongError,
  QueueFullError,
  RetryBudgetError,
  ClosedError,
  PoliteFetchError,
}

/** Plain data for any thrown value: the typed fields when it is one of ours. */
export function toErrorData(error: unknown): ErrorData {
  if (PoliteFetchError.is(error)) {
    const data: ErrorData = { name: error.name, message: error.message, attempts: error.attempts }
    if (error.retryAt !== undefined && Number.isFinite(error.retryAt)) data.retryAt = error.retryAt
    if (error.request !== undefined) data.request = error.request
    return data
  }
  if (error instanceof Error) return { name: error.name, message: error.message }
  return { name: 'Error', message: String(error) }
}

/** The error a follower's caller gets: the same typed class, or a DOMException/Error of that name. */
export function fromErrorData(data: ErrorData): Error {
  const Typed = TYPED[data.name]
  if (Typed !== undefined) {
    return new Typed(data.message, { retryAt: data.retryAt, attempts: data.attempts, request: data.request })
  }
  if (typeof DOMException === 'function' && (data.name === 'AbortError' || data.name === 'TimeoutError')) {
    return new DOMException(data.message, data.name)
  }
  const error = new Error(data.message)
  error.name = data.name
  return error
}
