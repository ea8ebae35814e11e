import { describe, expect, it } from 'vitest'
import { tokenBucket } from '../../../src/sim/servers/token-bucket.js'

const drain = (model: ReturnType<typeof tokenBucket>, now: number, n: number): number => {
  let admitted = 0
  for (let i = 0; i < n; i++) if (model.admit(now, 1).admitted) admitted++
  return admitted
}

describe('tokenBucket continuous', () => {
  const paper = () => tokenBucket({ capacity: 100, perMinute: 80, refill: 'continuous' })

  it('starts full: 100 pass at once, the 101st is refused until the next token (750 ms)', () => {
    const model = paper()
    expect(drain(model, 0, 100)).toBe(100)
    const refused = model.admit(0, 1)
    expect(refused).toEqual({
      admitted: false,
      retryAfterMs: 750,
      remaining: 0,
      limit: 100,
      resetMs: 75_000,
      windowMs: 75_000,
      policy: 'global',
    })
    expect(model.nextAdmitAt(0, 1)).toBe(750)
    expect(model.admit(749, 1).admitted).toBe(false)
    expect(model.admit(750, 1).admitted).toBe(true)
    expect(model.admit(750, 1).admitted).toBe(false)
  })

  it('reports remaining, reset and window after an admission', () => {
    const model = paper()
    expect(model.admit(0, 1)).toEqual({ admitted: true, remaining: 99, limit: 100, resetMs: 750, windowMs: 75_000, policy: 'global' })
  })

  it('refills fractionally: half a token at 375 ms, the next whole one at 750 ms', () => {
    const model = paper()
    drain(model, 0, 100)
    expect(model.nextAdmitAt(375, 1)).toBe(750)
    expect(model.nextAdmitAt(0, 3)).toBe(2250)
    expect(model.admit(375, 1).retryAfterMs).toBe(375)
  })

  it('never holds more than its capacity after a long idle spell', () => {
    const model = paper()
    drain(model, 0, 100)
    expect(drain(model, 3_600_000, 150)).toBe(100)
  })

  it('nextAdmitAt changes nothing', () => {
    const model = paper()
    drain(model, 0, 99)
    for (let i = 0; i < 5; i++) model.nextAdmitAt(0, 1)
    expect(model.admit(0, 1).admitted).toBe(true)
    expect(model.admit(0, 1).admitted).toBe(false)
  })

  it('a cost above the capacity can never pass', () => {
    const model = paper()
    expect(model.nextAdmitAt(0, 101)).toBe(Infinity)
    const refused = model.admit(0, 101)
    expect(refused.admitted).toBe(false)
    expect(refused.retryAfterMs).toBe(Infinity)
    expect(refused.remaining).toBe(100)
  })

  it('counts from its creation time and uses its policy name', () => {
    const model = tokenBucket({ capacity: 1, perMinute: 60, now: 10_000, policy: 'burst' })
    expect(model.admit(10_000, 1).policy).toBe('burst')
    expect(model.nextAdmitAt(10_000, 1)).toBe(11_000)
  })

  it('rejects a nonsensical configuration at construction', () => {
    expect(() => tokenBucket({ capacity: 0, perMinute: 80 })).toThrow(RangeError)
    expect(() => tokenBucket({ capacity: 10, perMinute: Number.NaN })).toThrow(RangeError)
    expect(() => tokenBucket({ capacity: 10, perMinute: 80, refill: 'stepped', stepIntervalMs: 0 })).toThrow(RangeError)
  })
})

describe('tokenBucket stepped (Envoy local rate limit)', () => {
  const envoy = (now = 0) => tokenBucket({ capacity: 100, perMinute: 80, refill: 'stepped', now })

  it('adds 80 tokens every 60 s counted from creation, nothing in between', () => {
    const model = envoy()
    expect(drain(model, 0, 100)).toBe(100)
    expect(model.nextAdmitAt(0, 1)).toBe(60_000)
    const refused = model.admit(59_999, 1)
    expect(refused.admitted).toBe(false)
    expect(refused.retryAfterMs).toBe(1)
    expect(drain(model, 60_000, 100)).toBe(80)
    expect(model.nextAdmitAt(60_000, 1)).toBe(120_000)
  })

  it('needs two steps to be full again after draining 100 (reset 120 s)', () => {
    const model = envoy()
    drain(model, 0, 99)
    const last = model.admit(0, 1)
    expect(last).toMatchObject({ admitted: true, remaining: 0, resetMs: 120_000, windowMs: 75_000 })
    expect(model.admit(90_000, 1).resetMs).toBe(30_000) // 79 left: the step at 120 s fills it
  })

  it('aligns steps to its creation, not to time zero', () => {
    const model = envoy(5_000)
    drain(model, 5_000, 100)
    expect(model.nextAdmitAt(6_000, 1)).toBe(65_000)
    expect(model.nextAdmitAt(6_000, 81)).toBe(125_000)
  })

  it('caps at capacity when several steps are due at once', () => {
    const model = envoy()
    drain(model, 0, 100)
    expect(drain(model, 600_000, 200)).toBe(100)
  })

  it('admits far fewer than continuous refill in the first minute after a burst', () => {
    const stepped = envoy()
    const continuous = tokenBucket({ capacity: 100, perMinute: 80 })
    let steppedCount = 0
    let continuousCount = 0
    for (let t = 0; t < 60_000; t += 100) {
      if (stepped.admit(t, 1).admitted) steppedCount++
      if (continuous.admit(t, 1).admitted) continuousCount++
    }
    expect(steppedCount).toBe(100)
    expect(continuousCount).toBe(100 + 79) // the 80th token lands at exactly 60 s
  })

  it('with 750 ms steps of one token it admits on the continuous schedule', () => {
    const model = tokenBucket({ capacity: 100, perMinute: 80, refill: 'stepped', stepIntervalMs: 750 })
    drain(model, 0, 100)
    expect(model.nextAdmitAt(1, 1)).toBe(750)
    expect(model.nextAdmitAt(751, 2)).toBe(1500)
  })
})
