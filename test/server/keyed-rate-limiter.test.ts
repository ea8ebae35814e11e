// The per-client and per-source rate limiters: a flood of distinct keys (invented client ids,
// addresses) must not grow them without bound, and forgetting a key may only ever be lenient.
import { describe, expect, it } from 'vitest'
import { createKeyedRateLimiter } from '../../src/server/keyed-rate-limiter.js'

const T0 = 1_700_000_000_000

describe('createKeyedRateLimiter', () => {
  it('holds at most maxKeys keys under a flood of distinct ones, forgetting the least recently used', () => {
    const limiter = createKeyedRateLimiter({ perSecond: 2, burst: 3, maxKeys: 100 })
    for (let i = 0; i < 3; i++) expect(limiter.take('busy', T0)).toBe(0)
    expect(limiter.take('busy', T0)).toBeGreaterThan(0) // out of tokens
    for (let i = 0; i < 10_000; i++) {
      expect(limiter.take(`invented-${i}`, T0)).toBe(0) // each new key starts with a full bucket
      expect(limiter.size()).toBeLessThanOrEqual(100)
    }
    expect(limiter.size()).toBe(100)
    // 'busy' was forgotten: it starts again with a full bucket (lenient, never stricter)
    expect(limiter.take('busy', T0)).toBe(0)
  })

  it('names keys like Object.prototype members as plain keys', () => {
    const limiter = createKeyedRateLimiter({ perSecond: 1, burst: 1 })
    for (const key of ['__proto__', 'constructor', 'toString']) {
      expect(limiter.take(key, T0)).toBe(0)
      expect(limiter.take(key, T0)).toBe(1_000)
    }
    expect(limiter.size()).toBe(3)
  })

  it('answers a wait of whole milliseconds and refills from a clock that goes backwards without a bonus', () => {
    const limiter = createKeyedRateLimiter({ perSecond: 2, burst: 1 })
    expect(limiter.take('k', T0)).toBe(0)
    expect(limiter.take('k', T0)).toBe(500)
    expect(limiter.take('k', T0 - 60_000)).toBe(500) // no tokens for time running backwards
    expect(limiter.take('k', T0 - 60_000 + 500)).toBe(0)
  })
})
