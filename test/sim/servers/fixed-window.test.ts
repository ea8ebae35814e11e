import { describe, expect, it } from 'vitest'
import { fixedWindow } from '../../../src/sim/servers/fixed-window.js'

describe('fixedWindow', () => {
  it('admits the limit per window and reopens exactly at the window end', () => {
    const model = fixedWindow({ limit: 100, windowMs: 75_000 })
    for (let i = 0; i < 100; i++) expect(model.admit(i, 1).admitted).toBe(true)
    expect(model.admit(100, 1)).toEqual({
      admitted: false,
      retryAfterMs: 74_900,
      remaining: 0,
      limit: 100,
      resetMs: 74_900,
      windowMs: 75_000,
      policy: 'global',
    })
    expect(model.nextAdmitAt(74_999, 1)).toBe(75_000)
    expect(model.admit(74_999, 1).admitted).toBe(false)
    expect(model.admit(75_000, 1)).toMatchObject({ admitted: true, remaining: 99, resetMs: 75_000 })
  })

  it('lets up to twice the limit through around a boundary', () => {
    const model = fixedWindow({ limit: 10, windowMs: 1000 })
    let admitted = 0
    for (let i = 0; i < 20; i++) if (model.admit(999, 1).admitted) admitted++
    for (let i = 0; i < 20; i++) if (model.admit(1000, 1).admitted) admitted++
    expect(admitted).toBe(20)
  })

  it('aligns windows to its creation time and charges costs', () => {
    const model = fixedWindow({ limit: 10, windowMs: 1000, now: 250 })
    expect(model.admit(300, 7)).toMatchObject({ admitted: true, remaining: 3, resetMs: 950 })
    expect(model.nextAdmitAt(300, 4)).toBe(1250)
    expect(model.nextAdmitAt(300, 3)).toBe(300)
    expect(model.nextAdmitAt(300, 11)).toBe(Infinity)
  })

  it('forgets a window left long ago', () => {
    const model = fixedWindow({ limit: 2, windowMs: 1000 })
    model.admit(0, 2)
    expect(model.admit(5_500, 2)).toMatchObject({ admitted: true, remaining: 0, resetMs: 500 })
  })
})
