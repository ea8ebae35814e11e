import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { gcra } from '../../../src/sim/servers/gcra.js'
import { tokenBucket } from '../../../src/sim/servers/token-bucket.js'

describe('gcra', () => {
  it('passes a burst of `capacity` from idle, then one per emission interval', () => {
    const model = gcra({ capacity: 100, perMinute: 80 })
    const first = model.admit(0, 1)
    expect(first).toEqual({ admitted: true, remaining: 99, limit: 100, resetMs: 750, windowMs: 75_000, policy: 'global' })
    for (let i = 1; i < 100; i++) expect(model.admit(0, 1).admitted).toBe(true)
    expect(model.admit(0, 1)).toMatchObject({ admitted: false, retryAfterMs: 750, remaining: 0, resetMs: 75_000 })
    expect(model.admit(749, 1).admitted).toBe(false)
    expect(model.admit(750, 1).admitted).toBe(true)
    expect(model.nextAdmitAt(750, 2)).toBe(2250)
  })

  it('with capacity 1 it spaces requests exactly one interval apart', () => {
    const model = gcra({ capacity: 1, perMinute: 60, now: 500 })
    expect(model.admit(500, 1).admitted).toBe(true)
    expect(model.admit(1499, 1)).toMatchObject({ admitted: false, retryAfterMs: 1 })
    expect(model.admit(1500, 1).admitted).toBe(true)
    expect(model.nextAdmitAt(1500, 2)).toBe(Infinity)
  })

  it('admits exactly what a continuous token bucket of the same quota admits', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 3000 }), cost: fc.integer({ min: 1, max: 4 }) }), { maxLength: 200 }), (ops) => {
        const a = gcra({ capacity: 5, perMinute: 80 })
        const b = tokenBucket({ capacity: 5, perMinute: 80 })
        let now = 0
        for (const { gapMs, cost } of ops) {
          now += gapMs
          const x = a.admit(now, cost)
          const y = b.admit(now, cost)
          expect(x.admitted).toBe(y.admitted)
          expect(x.remaining).toBe(y.remaining)
          expect(x.retryAfterMs ?? 0).toBeCloseTo(y.retryAfterMs ?? 0, 6)
        }
      }),
      { numRuns: 100 },
    )
  })
})
