import { describe, expect, it } from 'vitest'
import { windowed } from '../../../src/core/pacers/window.js'

const ok = { kind: 'ok' as const, status: 200 }

describe('windowed (the paper\'s WB)', () => {
  it('allows 40 successes per 60 s, then waits until the oldest leaves the window', () => {
    const pacer = windowed().create({ now: 0, random: () => 0.5 })
    for (let i = 0; i < 40; i++) {
      expect(pacer.delayMs(i * 100, 1)).toBe(0)
      pacer.onSend(i * 100, 1)
      pacer.onResult(i * 100 + 50, ok)
    }
    // Oldest success at 50 ms: free again at 60 050 ms.
    expect(pacer.delayMs(4000, 1)).toBe(56_050)
    expect(pacer.delayMs(60_049, 1)).toBe(1)
    expect(pacer.delayMs(60_050, 1)).toBe(0)
    expect(pacer.tokens(60_050)).toBe(1)
  })

  it('counts only successes', () => {
    const pacer = windowed({ limit: 2, windowMs: 10_000 }).create({ now: 0, random: () => 0.5 })
    for (let i = 0; i < 10; i++) pacer.onResult(i, { kind: 'throttled', status: 429 })
    expect(pacer.delayMs(10, 1)).toBe(0)
    pacer.onResult(20, ok)
    pacer.onResult(30, ok)
    expect(pacer.delayMs(40, 1)).toBe(9980)
  })

  it('backs off like UB', () => {
    const pacer = windowed().create({ now: 0, random: () => 0 })
    expect(pacer.retryDelayMs!(0, 1, { kind: 'throttled', status: 429 })).toBe(100)
  })

  it('resumes its window from state, dropping times written in the future', () => {
    const pacer = windowed({ limit: 2, windowMs: 10_000 }).create({ now: 0, random: () => 0.5 })
    pacer.onResult(100, ok)
    pacer.onResult(200, ok)
    const state = pacer.toJSON(300)
    const resumed = windowed({ limit: 2, windowMs: 10_000 }).create({ now: 400, random: () => 0.5, state })
    expect(resumed.delayMs(400, 1)).toBe(9700)
    const future = windowed({ limit: 2, windowMs: 10_000 }).create({
      now: 400,
      random: () => 0.5,
      state: { ...state, successes: [100, 1e15] },
    })
    expect(future.delayMs(400, 1)).toBe(0)
  })
})
