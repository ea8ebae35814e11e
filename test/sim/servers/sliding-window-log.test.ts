import { describe, expect, it } from 'vitest'
import { slidingWindowLog } from '../../../src/sim/servers/sliding-window-log.js'

describe('slidingWindowLog', () => {
  it('frees quota exactly when old entries leave the trailing window', () => {
    const model = slidingWindowLog({ limit: 100, windowMs: 75_000 })
    expect(model.admit(0, 50).admitted).toBe(true)
    expect(model.admit(30_000, 50)).toMatchObject({ admitted: true, remaining: 0, resetMs: 75_000 })
    const refused = model.admit(40_000, 1)
    expect(refused).toMatchObject({ admitted: false, retryAfterMs: 35_000, remaining: 0, resetMs: 65_000 })
    expect(model.nextAdmitAt(40_000, 50)).toBe(75_000)
    expect(model.nextAdmitAt(40_000, 60)).toBe(105_000)
    expect(model.admit(74_999, 1).admitted).toBe(false)
    expect(model.admit(75_000, 50)).toMatchObject({ admitted: true, remaining: 0 })
  })

  it('has no boundary burst: never more than the limit in any window', () => {
    const model = slidingWindowLog({ limit: 10, windowMs: 1000 })
    let admitted = 0
    for (let t = 900; t <= 1500; t += 10) if (model.admit(t, 1).admitted) admitted++
    expect(admitted).toBe(10)
  })

  it('reports a full quota and no reset once the log is empty', () => {
    const model = slidingWindowLog({ limit: 3, windowMs: 1000 })
    model.admit(0, 3)
    expect(model.admit(2000, 1)).toMatchObject({ admitted: true, remaining: 2, resetMs: 1000 })
    expect(model.nextAdmitAt(2000, 4)).toBe(Infinity)
  })

  it('stays correct over many entries (log compaction)', () => {
    const model = slidingWindowLog({ limit: 100, windowMs: 1000 })
    let admitted = 0
    for (let t = 0; t < 100_000; t += 5) if (model.admit(t, 1).admitted) admitted++
    // 100 per second over 100 s, in steady state exactly the limit per window
    expect(admitted).toBe(10_000)
  })
})
