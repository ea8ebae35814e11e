import { describe, expect, it } from 'vitest'
import { kyBackoff } from '../../../src/sim/peers/ky-backoff.js'
import type { Signal } from '../../../src/core/types.js'

const throttled: Signal = { kind: 'throttled', status: 429 }
const T0 = 1_700_000_000_000

describe('kyBackoff (ky 2.x retry timing)', () => {
  it('waits 0.3 · 2^(n−1) s without jitter and never paces', () => {
    const pacer = kyBackoff().create({ now: T0, random: () => 0.5 })
    expect([1, 2, 3, 4, 5].map((n) => pacer.retryDelayMs!(T0, n, throttled))).toEqual([300, 600, 1200, 2400, 4800])
    expect(pacer.delayMs(T0, 1)).toBe(0)
  })

  it('uses Retry-After for 429 and 503, then a reset time, unjittered', () => {
    const pacer = kyBackoff({ jitter: true }).create({ now: T0, random: () => 0.5 })
    expect(pacer.retryDelayMs!(T0, 1, { ...throttled, retryAt: T0 + 7000 })).toBe(7000)
    expect(pacer.retryDelayMs!(T0, 1, { kind: 'overloaded', status: 503, resetAt: T0 + 9000 })).toBe(9000)
    expect(pacer.retryDelayMs!(T0, 2, throttled)).toBe(300) // jittered: 0.5 × 600
  })

  it('caps with backoffLimit and maxRetryAfter, and can ignore server timing', () => {
    const capped = kyBackoff({ backoffLimitMs: 1000, maxRetryAfterMs: 2000 }).create({ now: T0, random: () => 0.5 })
    expect(capped.retryDelayMs!(T0, 6, throttled)).toBe(1000)
    expect(capped.retryDelayMs!(T0, 1, { ...throttled, retryAt: T0 + 60_000 })).toBe(2000)
    const deaf = kyBackoff({ ignoreRetryAfter: true }).create({ now: T0, random: () => 0.5 })
    expect(deaf.retryDelayMs!(T0, 1, { ...throttled, retryAt: T0 + 60_000 })).toBe(300)
  })

  it('with a limit, restarts the count when the caller calls again', () => {
    const pacer = kyBackoff({ limit: 2 }).create({ now: T0, random: () => 0.5 })
    expect([1, 2, 3, 4, 5, 6].map((n) => pacer.retryDelayMs!(T0, n, throttled))).toEqual([300, 600, 0, 300, 600, 0])
  })
})
