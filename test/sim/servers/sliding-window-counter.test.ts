import { describe, expect, it } from 'vitest'
import { slidingWindowCounter } from '../../../src/sim/servers/sliding-window-counter.js'

describe('slidingWindowCounter (Cloudflare estimate)', () => {
  it('weights the previous window by its overlap: 42 × 45/60 + 18 = 49.5 of 50', () => {
    const model = slidingWindowCounter({ limit: 50, windowMs: 60_000 })
    expect(model.admit(10_000, 42).admitted).toBe(true)
    for (let i = 0; i < 18; i++) expect(model.admit(75_000, 1).admitted).toBe(true)
    const refused = model.admit(75_000, 1)
    expect(refused.admitted).toBe(false)
    expect(refused.remaining).toBe(0)
    // previous × (60000 − e) / 60000 + 18 + 1 = 50  →  e = 60000 × 11 / 42
    const expected = 60_000 + (60_000 * 11) / 42
    expect(model.nextAdmitAt(75_000, 1)).toBeCloseTo(expected, 6)
    expect(refused.retryAfterMs).toBeCloseTo(expected - 75_000, 6)
    expect(model.admit(expected - 1, 1).admitted).toBe(false)
    expect(model.admit(model.nextAdmitAt(75_000, 1), 1).admitted).toBe(true)
  })

  it('does not count refused requests', () => {
    const model = slidingWindowCounter({ limit: 5, windowMs: 1000 })
    model.admit(0, 5)
    for (let i = 0; i < 50; i++) model.admit(500, 1)
    expect(model.nextAdmitAt(500, 1)).toBe(1200) // 5 × (1000 − 200)/1000 + 1 = 5
  })

  it('waits for the next window when the current one is already full', () => {
    const model = slidingWindowCounter({ limit: 50, windowMs: 60_000 })
    model.admit(0, 50)
    expect(model.admit(1000, 1)).toMatchObject({ admitted: false, retryAfterMs: 60_200, resetMs: 119_000 })
    expect(model.admit(61_199, 1).admitted).toBe(false)
    expect(model.admit(61_200, 1).admitted).toBe(true)
  })

  it('forgets both counters after two idle windows', () => {
    const model = slidingWindowCounter({ limit: 10, windowMs: 1000 })
    model.admit(0, 10)
    expect(model.admit(2000, 10)).toMatchObject({ admitted: true, remaining: 0 })
  })

  it('reports remaining from the estimate and a reset when both counters fade', () => {
    const model = slidingWindowCounter({ limit: 10, windowMs: 1000, now: 100 })
    expect(model.admit(600, 4)).toMatchObject({ admitted: true, remaining: 6, resetMs: 1500 })
    // next window, 250 ms in: 4 × 0.75 = 3 estimated
    expect(model.admit(1350, 1)).toMatchObject({ admitted: true, remaining: 6, resetMs: 1750 })
  })
})
