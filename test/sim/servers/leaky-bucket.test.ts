import { describe, expect, it } from 'vitest'
import { leakyBucket } from '../../../src/sim/servers/leaky-bucket.js'

describe('leakyBucket (nginx limit_req burst nodelay)', () => {
  it('passes burst + 1 at once, then one per 1/rate', () => {
    const model = leakyBucket({ perMinute: 60, burst: 4 })
    expect(model.admit(0, 1)).toEqual({ admitted: true, remaining: 4, limit: 5, resetMs: 1000, windowMs: 5000, policy: 'global' })
    for (let i = 0; i < 4; i++) expect(model.admit(0, 1).admitted).toBe(true)
    expect(model.admit(0, 1)).toMatchObject({ admitted: false, retryAfterMs: 1000, remaining: 0, resetMs: 5000 })
    expect(model.admit(999, 1).admitted).toBe(false)
    expect(model.admit(1000, 1).admitted).toBe(true)
  })

  it('with burst 0 admits one request per interval (nginx without burst)', () => {
    const model = leakyBucket({ perMinute: 120, burst: 0 })
    expect(model.admit(0, 1).admitted).toBe(true)
    expect(model.admit(100, 1)).toMatchObject({ admitted: false, retryAfterMs: 400 })
    expect(model.admit(500, 1).admitted).toBe(true)
  })

  it('refusals leave the excess alone (nginx returns before storing it)', () => {
    const model = leakyBucket({ perMinute: 60, burst: 1 })
    model.admit(0, 1)
    model.admit(0, 1)
    for (let t = 0; t < 1000; t += 50) model.admit(t, 1)
    expect(model.nextAdmitAt(950, 1)).toBe(1000)
  })

  it('drains to empty, never below: after idle the full burst is back', () => {
    const model = leakyBucket({ perMinute: 60, burst: 2 })
    model.admit(0, 3)
    let admitted = 0
    for (let i = 0; i < 10; i++) if (model.admit(60_000, 1).admitted) admitted++
    expect(admitted).toBe(3)
    expect(model.nextAdmitAt(60_000, 4)).toBe(Infinity)
  })

  it('rejects a negative burst', () => {
    expect(() => leakyBucket({ perMinute: 60, burst: -1 })).toThrow(RangeError)
  })
})
