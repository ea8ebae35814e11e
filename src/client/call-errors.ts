// The typed errors a call ends with, built from the call's state. One place, so every
// error carries the same context: the request label, the attempts made, the last
// signal, when the server would accept again, and the cause.
import type { GiveUpReason } from '../core/retry-policy.js'
import type { Call } from './call.js'
import {
  ClosedError,
  DeadlineError,
  type PoliteFetchError,
  type PoliteFetchErrorOptions,
  RetryAfterTooLongError,
  RetryBudgetError,
} from './errors.js'
import { isoTime } from './iso-time.js'

export function errorInit(call: Call<unknown>): PoliteFetchErrorOptions {
  return { request: call.job.label, signal: call.lastSignal, attempts: call.attempts }
}

/** What an error message names the call by: its request (method + URL) when known, else its lane. */
function callName(call: Call<unknown>): string {
  return call.job.label ?? call.lane.scope
}

export function deadlineError(call: Call<unknown>, retryAt: number | undefined, cause?: unknown): DeadlineError {
  // A time past any date (a huge cost on a paced lane) is said in words: formatting it threw, out
  // of the lane's wake timer, and the call never settled.
  const iso = retryAt === undefined ? undefined : isoTime(retryAt)
  const when = retryAt === undefined ? '' : iso === undefined ? ' (next possible attempt beyond any date)' : ` (next possible attempt at ${iso})`
  return new DeadlineError(`polite-fetch: deadline reached for ${callName(call)}${when}`, {
    ...errorInit(call),
    retryAt,
    cause,
  })
}

export function closedError(call: Call<unknown>): ClosedError {
  return new ClosedError('polite-fetch: the limiter was closed', errorInit(call))
}

/**
 * The error for a give-up that rejects (budget, too-long Retry-After, deadline); undefined
 * for give-ups that hand the caller the last attempt's own result.
 */
export function giveUpError(
  reason: GiveUpReason | string,
  call: Call<unknown>,
  retryAt: number | undefined,
  now: number,
  cause: unknown,
  maxRetryAfterMs: number,
): PoliteFetchError | undefined {
  const init = { ...errorInit(call), retryAt, cause }
  switch (reason) {
    case 'retry-budget':
      return new RetryBudgetError(
        `polite-fetch: ${callName(call)}: retry budget of ${call.retryBudget} used up after ${call.attempts} attempt${call.attempts === 1 ? '' : 's'}`,
        init,
      )
    case 'retry-after-too-long': {
      const waitMs = Math.round((retryAt ?? now) - now)
      const message = `polite-fetch: ${callName(call)}: the server asked to wait ${waitMs} ms, more than maxRetryAfterMs (${maxRetryAfterMs})`
      return new RetryAfterTooLongError(message, init)
    }
    case 'deadline':
      return deadlineError(call, retryAt, cause)
    default:
      return undefined
  }
}
