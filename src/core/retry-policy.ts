// Whether and when one call tries again, as a pure function of what its last attempt
// said. The lane-wide pacing (how fast the scope may send) lives in the pacer; this
// decides the one call's fate: retry no earlier than `notBefore`, or give up and why.
//
// Safety rules (RFC 9110 §9.2.2, and what users of retry libraries keep asking for):
// - `throttled` (429) and `overloaded` (503) were not processed by the server, so they
//   are retried for any method, as long as the attempt is replayable;
// - `error` (no response: network failure, timeout) may have been processed, so it is
//   retried only when the caller said so (idempotent method or Idempotency-Key);
// - the server's retryAt is a floor, never shortened; a retryAt beyond `maxRetryAfterMs`
//   or beyond the call's deadline fails fast instead of sleeping through it;
// - the server's `x-should-retry` (Signal.shouldRetry) overrides the status: `false` ends
//   the call with the response it answers, `true` makes any response >= 400 retryable
//   (the server vouches that repeating it is safe), waiting the error backoff, since a
//   response that is not congestion says nothing about when to come back.
import type { Random, Signal } from './types.js'

/** Give-up reason of a request that cannot be sent at all (fetch or undici refuse it as malformed). */
export const INVALID_REQUEST = 'invalid-request'

export type GiveUpReason =
  | 'not-retryable'
  | 'body-not-replayable'
  | 'unsafe-to-retry'
  | 'invalid-request'
  | 'retry-budget'
  | 'retry-after-too-long'
  | 'deadline'
  | 'aborted'
  | 'queue-full'
  | 'closed'
  | 'server-no-retry'

/** Give-up reason when the server's `x-should-retry: false` stops the retries. */
export const SERVER_NO_RETRY = 'server-no-retry'

/**
 * Whether an attempt's response goes straight to the caller: it is not congestion and
 * the server did not ask for it to be sent again. Every shell settles these at once.
 */
export function settlesAtOnce(signal: Signal): boolean {
  return signal.kind === 'ok' && signal.shouldRetry !== true
}

export type RetryDecision =
  | { retry: true; notBefore: number }
  /** `retryAt`: when an attempt could have been made, for the caller's error. */
  | { retry: false; reason: GiveUpReason | string; retryAt?: number }

export interface RetryInput {
  now: number
  signal: Signal
  /** The attempt's own verdict (false for a body that cannot be replayed, …). */
  retryable: boolean
  /** Why the attempt is not retryable, when it says. */
  reason?: string | undefined
  /** Whether the job allows `error` signals to be retried. */
  retryErrors: boolean
  /** Failed attempts so far, this one included (1 after the first failure). */
  failures: number
  /** Retries already made (failures - 1 when every failure was retried). */
  retries: number
  retryBudget: number
  /** Epoch ms by which the call must be settled. */
  deadlineAt: number
  maxRetryAfterMs: number
  /** The pacer's per-request wait for this failure (`Pacer.retryDelayMs`), 0 when it has none. */
  pacerRetryDelayMs: number
  /** Epoch ms the lane is gated until (retryAt plus jitter), 0 when not gated. */
  gateUntil: number
  /** Backoff for `error` signals, which teach no pacer anything: exponential, half jittered. */
  errorBackoffBaseMs: number
  errorBackoffMaxMs: number
  random: Random
}

/**
 * Why an attempt's answer is final whatever the budget, the deadline and the timing: the
 * server said so, it succeeded, the job forbids it, or an error that is not safe to resend.
 * Undefined: it may be retried. Also what a follower tab decides alone once the leader that
 * granted the attempt is gone (src/tabs/follower-calls.ts).
 */
export function finalAnswer(signal: Signal, retryable: boolean, reason: string | undefined, retryErrors: boolean): string | undefined {
  if (signal.shouldRetry === false) return SERVER_NO_RETRY
  if (settlesAtOnce(signal)) return 'not-retryable'
  if (!retryable) return reason ?? 'not-retryable'
  if (signal.kind === 'error' && !retryErrors) return 'unsafe-to-retry'
  return undefined
}

export function decideRetry(input: RetryInput): RetryDecision {
  const { signal, now } = input
  const final = finalAnswer(signal, input.retryable, input.reason, input.retryErrors)
  if (final !== undefined) return { retry: false, reason: final }
  const retryAt = signal.retryAt
  if (input.retries >= input.retryBudget) return withRetryAt('retry-budget', retryAt)
  if (retryAt !== undefined && retryAt - now > input.maxRetryAfterMs) {
    return { retry: false, reason: 'retry-after-too-long', retryAt }
  }
  let notBefore = now + Math.max(0, input.pacerRetryDelayMs)
  if (retryAt !== undefined && retryAt > notBefore) notBefore = retryAt
  if (input.gateUntil > notBefore) notBefore = input.gateUntil
  if (signal.kind === 'error' || signal.kind === 'ok') {
    const backoff = errorBackoffMs(input.failures, input.errorBackoffBaseMs, input.errorBackoffMaxMs, input.random)
    if (now + backoff > notBefore) notBefore = now + backoff
  }
  if (notBefore > input.deadlineAt) return { retry: false, reason: 'deadline', retryAt: notBefore }
  return { retry: true, notBefore }
}

function withRetryAt(reason: GiveUpReason, retryAt: number | undefined): RetryDecision {
  return retryAt === undefined ? { retry: false, reason } : { retry: false, reason, retryAt }
}

/**
 * "Equal jitter" exponential backoff: half the step is fixed (so a retry never comes
 * back immediately), half is random (so clients that failed together spread out).
 */
export function errorBackoffMs(failures: number, baseMs: number, maxMs: number, random: Random): number {
  const step = Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1))
  return step / 2 + (step / 2) * random()
}

/**
 * The epoch ms a lane waits until after the server said `retryAt`: never earlier, plus
 * a random spread of up to `ratio` of the wait (capped at `maxMs`), because every
 * client that got the same Retry-After would otherwise wake in the same millisecond
 * and re-trip the limit together.
 */
export function jitteredRetryAt(now: number, retryAt: number, ratio: number, maxMs: number, random: Random): number {
  const waitMs = retryAt - now
  if (waitMs <= 0) return retryAt
  return retryAt + Math.ceil(Math.min(maxMs, waitMs * ratio) * random())
}
