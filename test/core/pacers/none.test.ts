import { describe, expect, it } from 'vitest'
import { none } from '../../../src/core/pacers/none.js'

describe('none', () => {
  it('never waits, whatever happened', () => {
    const pacer = none().create({ now: 0, random: () => 0.5 })
    for (let i = 0; i < 50; i++) {
      expect(pacer.delayMs(i * 10, 1)).toBe(0)
      pacer.onSend(i * 10, 1)
      pacer.onResult(i * 10 + 5, { kind: 'throttled', status: 429, retryAt: i * 10 + 60_000 })
      expect(pacer.retryDelayMs?.(i * 10 + 5, i + 1, { kind: 'throttled', status: 429 })).toBe(0)
    }
    expect(pacer.delayMs(1000, 100)).toBe(0)
    expect(pacer.ratePerSecond).toBe(Infinity)
    expect(pacer.toJSON(7)).toEqual({ kind: 'none', version: 1, savedAt: 7 })
  })
})
