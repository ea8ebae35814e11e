import { describe, expect, it } from 'vitest'
import { decideRetry, errorBackoffMs, jitteredRetryAt, type RetryInput, settlesAtOnce } from '../../src/core/retry-policy.js'
import type { Signal } from '../../src/core/types.js'

const now = 1_000_000

function input(overrides: Partial<RetryInput>): RetryInput {
  return {
    now,
    signal: { kind: 'throttled', status: 429 },
    retryable: true,
    retryErrors: false,
    failures: 1,
    retries: 0,
    retryBudget: Infinity,
    deadlineAt: now + 60_000,
    maxRetryAfterMs: 60_000,
    pacerRetryDelayMs: 0,
    gateUntil: 0,
    errorBackoffBaseMs: 100,
    errorBackoffMaxMs: 10_000,
    random: () => 0,
    ...overrides,
  }
}

describe('decideRetry', () => {
  it('never retries an ok signal', () => {
    expect(decideRetry(input({ signal: { kind: 'ok', status: 404 } })).retry).toBe(false)
  })

  describe("the server's x-should-retry", () => {
    it.each<[string, Signal, boolean]>([
      ['false on a 429', { kind: 'throttled', status: 429, shouldRetry: false }, false],
      ['false on a 529', { kind: 'overloaded', status: 529, shouldRetry: false }, false],
      ['false on a 429 with a Retry-After', { kind: 'throttled', status: 429, retryAt: now + 10, shouldRetry: false }, false],
      ['true on a 500', { kind: 'ok', status: 500, shouldRetry: true }, true],
      ['true on a 409', { kind: 'ok', status: 409, shouldRetry: true }, true],
      ['true on a 429', { kind: 'throttled', status: 429, shouldRetry: true }, true],
      ['absent on a 500', { kind: 'ok', status: 500 }, false],
    ])('%s → retry %s', (_name, signal, retry) => {
      expect(decideRetry(input({ signal })).retry).toBe(retry)
    })

    it('false ends the call with the reason, whatever the job allows', () => {
      const signal: Signal = { kind: 'throttled', status: 429, shouldRetry: false }
      expect(decideRetry(input({ signal, retryErrors: true }))).toEqual({ retry: false, reason: 'server-no-retry' })
      expect(settlesAtOnce(signal)).toBe(false) // the limiter decides, and gives up
    })

    it('true on a response that is not congestion waits the error backoff (it says nothing about when)', () => {
      const signal: Signal = { kind: 'ok', status: 500, shouldRetry: true }
      expect(settlesAtOnce(signal)).toBe(false)
      expect(decideRetry(input({ signal, failures: 3 }))).toEqual({ retry: true, notBefore: now + 200 })
      // The server vouches for the repeat: no idempotency needed, but the body must still be replayable.
      expect(decideRetry(input({ signal, retryable: false, reason: 'body-not-replayable' }))).toEqual({
        retry: false,
        reason: 'body-not-replayable',
      })
      expect(decideRetry(input({ signal, retries: 2, retryBudget: 2 }))).toEqual({ retry: false, reason: 'retry-budget' })
    })

    it('an ok signal without it settles at once', () => {
      expect(settlesAtOnce({ kind: 'ok', status: 500 })).toBe(true)
      expect(settlesAtOnce({ kind: 'ok', status: 200 })).toBe(true)
      expect(settlesAtOnce({ kind: 'throttled', status: 429 })).toBe(false)
    })
  })

  it('retries throttled and overloaded signals for any job, no earlier than retryAt', () => {
    expect(decideRetry(input({ signal: { kind: 'throttled', status: 429, retryAt: now + 1_234 } }))).toEqual({
      retry: true,
      notBefore: now + 1_234,
    })
    expect(decideRetry(input({ signal: { kind: 'overloaded', status: 503 } }))).toEqual({ retry: true, notBefore: now })
  })

  it('takes the latest of retryAt, the lane gate and the pacer delay', () => {
    const signal = { kind: 'throttled' as const, status: 429, retryAt: now + 100 }
    expect(decideRetry(input({ signal, gateUntil: now + 150 }))).toEqual({ retry: true, notBefore: now + 150 })
    expect(decideRetry(input({ signal, pacerRetryDelayMs: 400 }))).toEqual({ retry: true, notBefore: now + 400 })
  })

  it('keeps the attempt verdict and its reason', () => {
    expect(decideRetry(input({ retryable: false, reason: 'body-not-replayable' }))).toEqual({
      retry: false,
      reason: 'body-not-replayable',
    })
  })

  it('retries error signals only when the job allows it, after a backoff', () => {
    const error = { kind: 'error' as const, status: 0 }
    expect(decideRetry(input({ signal: error }))).toEqual({ retry: false, reason: 'unsafe-to-retry' })
    expect(decideRetry(input({ signal: error, retryErrors: true, failures: 3 }))).toEqual({
      retry: true,
      notBefore: now + 200, // step 400, half fixed
    })
  })

  it('gives up on the budget, a too-long Retry-After and a deadline, with retryAt', () => {
    const retryAt = now + 90_000
    expect(decideRetry(input({ retries: 2, retryBudget: 2 }))).toEqual({ retry: false, reason: 'retry-budget' })
    expect(decideRetry(input({ signal: { kind: 'throttled', status: 429, retryAt } }))).toEqual({
      retry: false,
      reason: 'retry-after-too-long',
      retryAt,
    })
    expect(decideRetry(input({ signal: { kind: 'throttled', status: 429, retryAt }, maxRetryAfterMs: Infinity }))).toEqual({
      retry: false,
      reason: 'deadline',
      retryAt,
    })
  })
})

describe('errorBackoffMs', () => {
  it('doubles per failure up to the cap, half of each step jittered', () => {
    expect([1, 2, 3].map((f) => errorBackoffMs(f, 100, 10_000, () => 0))).toEqual([50, 100, 200])
    expect(errorBackoffMs(2, 100, 10_000, () => 1)).toBe(200)
    expect(errorBackoffMs(30, 100, 10_000, () => 0.5)).toBe(7_500)
  })
})

describe('jitteredRetryAt', () => {
  it('is never before retryAt and spreads by at most ratio × wait, capped', () => {
    expect(jitteredRetryAt(now, now + 2_000, 0.1, 1_000, () => 0)).toBe(now + 2_000)
    expect(jitteredRetryAt(now, now + 2_000, 0.1, 1_000, () => 0.9999)).toBe(now + 2_200)
    expect(jitteredRetryAt(now, now + 60_000, 0.1, 1_000, () => 0.9999)).toBe(now + 61_000)
    expect(jitteredRetryAt(now, now - 5, 0.1, 1_000, () => 0.999)).toBe(now - 5)
  })
})
