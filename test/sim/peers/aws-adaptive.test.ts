import { describe, expect, it } from 'vitest'
import { awsAdaptive } from '../../../src/sim/peers/aws-adaptive.js'
import type { Signal } from '../../../src/core/types.js'

const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
const T0 = 1_700_000_000_000

describe('awsAdaptive (AWS SDK v3 adaptive retry mode)', () => {
  it('does not pace until the first throttle', () => {
    const pacer = awsAdaptive().create({ now: T0, random: () => 0.5 })
    for (let i = 0; i < 100; i++) {
      expect(pacer.delayMs(T0 + i * 10, 1)).toBe(0)
      pacer.onSend(T0 + i * 10, 1)
      pacer.onResult(T0 + i * 10, ok)
    }
    expect(pacer.ratePerSecond).toBe(Infinity)
  })

  it('measures the rate in 0.5 s buckets and cuts it ×0.7 on a throttle', () => {
    const pacer = awsAdaptive().create({ now: T0, random: () => 0.5 })
    // 10 responses per second for 5 s: the smoothed measured rate converges on 10/s.
    for (let i = 0; i < 50; i++) pacer.onResult(T0 + 100 * i, ok)
    pacer.onResult(T0 + 5000, throttled) // closes the bucket: measured ≈ 10/s
    expect(pacer.ratePerSecond).toBeCloseTo(0.7 * (pacer.toJSON(T0 + 5000).measuredTxRate as number), 6)
    expect(pacer.ratePerSecond).toBeGreaterThan(6)
    expect(pacer.ratePerSecond).toBeLessThan(8)
  })

  it('never goes below 0.5 tokens/s', () => {
    const pacer = awsAdaptive().create({ now: T0, random: () => 0.5 })
    for (let i = 0; i < 20; i++) pacer.onResult(T0 + 10_000 * i, throttled)
    expect(pacer.ratePerSecond).toBe(0.5)
    pacer.onSend(T0 + 200_000, 1)
    // One token at 0.5/s: the next attempt waits 2 s.
    expect(pacer.delayMs(T0 + 200_000, 1)).toBe(2000)
  })

  it('recovers along the CUBIC curve, limited to twice the measured rate', () => {
    const pacer = awsAdaptive().create({ now: T0, random: () => 0.5 })
    for (let i = 0; i < 100; i++) pacer.onResult(T0 + 100 * i, ok) // 10/s for 10 s
    pacer.onResult(T0 + 10_000, throttled)
    const wMax = (pacer.toJSON(T0 + 10_000).measuredTxRate as number)
    const k = Math.cbrt((wMax * 0.3) / 0.4)
    // Keep responses flowing at 10/s so 2 × measured never binds; at t = K the curve is back at W_max.
    let t = T0 + 10_000
    while (t < T0 + 10_000 + k * 1000 - 100) {
      t += 100
      pacer.onResult(t, ok)
    }
    const expected = 0.4 * ((t - (T0 + 10_000)) / 1000 - k) ** 3 + wMax
    expect(pacer.ratePerSecond).toBeCloseTo(expected, 4)
  })

  it('backs off with full jitter: 500 ms base for 429, 100 ms for 503, capped at 20 s', () => {
    const top = awsAdaptive().create({ now: T0, random: () => 0.999999 })
    expect(top.retryDelayMs!(T0, 1, throttled)).toBe(499)
    expect(top.retryDelayMs!(T0, 3, throttled)).toBe(1999)
    expect(top.retryDelayMs!(T0, 12, throttled)).toBe(19_999)
    expect(top.retryDelayMs!(T0, 2, { kind: 'overloaded', status: 503 })).toBe(199)
    const bottom = awsAdaptive().create({ now: T0, random: () => 0 })
    expect(bottom.retryDelayMs!(T0, 5, throttled)).toBe(0)
  })

  it('waits for Retry-After but at most backoff + 5 s', () => {
    const pacer = awsAdaptive().create({ now: T0, random: () => 0.5 })
    expect(pacer.retryDelayMs!(T0, 1, { ...throttled, retryAt: T0 + 3000 })).toBe(3000)
    expect(pacer.retryDelayMs!(T0, 1, { ...throttled, retryAt: T0 + 30_000 })).toBe(250 + 5000)
  })

  it('spends the 500-token retry quota at 5 per throttled retry, then waits the backoff twice', () => {
    const pacer = awsAdaptive().create({ now: T0, random: () => 0.5 })
    for (let i = 0; i < 100; i++) expect(pacer.retryDelayMs!(T0, 1, throttled)).toBe(250)
    expect(pacer.toJSON(T0).quota).toBe(0)
    expect(pacer.retryDelayMs!(T0, 1, throttled)).toBe(500)
    pacer.onResult(T0, ok) // a successful retry refunds its 5
    expect(pacer.toJSON(T0).quota).toBe(5)
  })
})
