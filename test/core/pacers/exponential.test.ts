import { describe, expect, it } from 'vitest'
import { exponential } from '../../../src/core/pacers/exponential.js'
import type { Signal } from '../../../src/core/types.js'

/** Deterministic uniform numbers (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const throttled: Signal = { kind: 'throttled', status: 429 }

describe('exponential (the paper\'s UB)', () => {
  it('never paces attempts', () => {
    const pacer = exponential().create({ now: 0, random: seeded(1) })
    pacer.onResult(0, throttled)
    expect(pacer.delayMs(1, 1)).toBe(0)
    expect(pacer.ratePerSecond).toBe(Infinity)
  })

  it('draws each retry from U(0.1 s, min(2^n − 1 s, cap)), rounded to 10 ms', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const pacer = exponential().create({ now: 0, random: seeded(seed) })
      const cap = (pacer.toJSON(0).capMs as number)
      for (let n = 1; n <= 9; n++) {
        const upper = Math.min((2 ** n - 1) * 1000, cap)
        const delay = pacer.retryDelayMs!(0, n, throttled)
        expect(delay).toBeGreaterThanOrEqual(100)
        expect(delay).toBeLessThanOrEqual(upper)
        expect(delay % 10).toBe(0)
      }
    }
  })

  it('uses the full range: n = 1 ends below 1 s, n = 6 reaches past 15 s', () => {
    const random = seeded(7)
    let maxFirst = 0
    let maxSixth = 0
    for (let i = 0; i < 300; i++) {
      const pacer = exponential().create({ now: 0, random })
      maxFirst = Math.max(maxFirst, pacer.retryDelayMs!(0, 1, throttled))
      maxSixth = Math.max(maxSixth, pacer.retryDelayMs!(0, 6, throttled))
    }
    expect(maxFirst).toBeLessThanOrEqual(1000)
    expect(maxFirst).toBeGreaterThan(900)
    expect(maxSixth).toBeGreaterThan(29_000)
  })

  it('draws the cap once per client from U(30 s, 34 s), 10 ms grain', () => {
    const random = seeded(3)
    const caps = new Set<number>()
    for (let i = 0; i < 200; i++) {
      const cap = exponential().create({ now: 0, random }).toJSON(0).capMs as number
      expect(cap).toBeGreaterThanOrEqual(30_000)
      expect(cap).toBeLessThanOrEqual(34_000)
      expect(cap % 10).toBe(0)
      caps.add(cap)
    }
    expect(caps.size).toBeGreaterThan(100)
  })

  it('with a scripted random, gives the exact draws of the code', () => {
    // cap = 30 + 0.5·4 = 32 s; n = 3: 0.1 + 0.25·(7 − 0.1) = 1.825 s → 1.83 s (round to 10 ms)
    const values = [0.5, 0.25]
    const pacer = exponential().create({ now: 0, random: () => values.shift() ?? 0 })
    expect(pacer.toJSON(0).capMs).toBe(32_000)
    expect(pacer.retryDelayMs!(0, 3, throttled)).toBe(1830)
  })

  it('is never earlier than Retry-After, unless told not to honour it', () => {
    const pacer = exponential().create({ now: 0, random: () => 0 })
    expect(pacer.retryDelayMs!(1000, 1, { ...throttled, retryAt: 61_000 })).toBe(60_000)
    const deaf = exponential({ honourRetryAfter: false }).create({ now: 0, random: () => 0 })
    expect(deaf.retryDelayMs!(1000, 1, { ...throttled, retryAt: 61_000 })).toBe(100)
  })

  it('resumes its cap from saved state and ignores a foreign or out-of-range one', () => {
    const first = exponential().create({ now: 0, random: () => 0.75 })
    const state = first.toJSON(10)
    const resumed = exponential().create({ now: 20, random: () => 0, state })
    expect(resumed.toJSON(20).capMs).toBe(33_000)
    const bogus = exponential().create({ now: 20, random: () => 0, state: { ...state, capMs: 1e9 } })
    expect(bogus.toJSON(20).capMs).toBe(30_000)
    const foreign = exponential().create({ now: 20, random: () => 0, state: { ...state, kind: 'atb' } })
    expect(foreign.toJSON(20).capMs).toBe(30_000)
  })
})
