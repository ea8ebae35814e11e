import { describe, expect, it } from 'vitest'
import { sreRejectionProbability, sreThrottling } from '../../../src/sim/peers/sre-throttling.js'
import type { Signal } from '../../../src/core/types.js'

const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
const T0 = 1_700_000_000_000

describe('sreThrottling (Google SRE client-side adaptive throttling)', () => {
  it('computes the book\'s probability: 100 requests, 25 accepts, K = 2 → 50/101', () => {
    expect(sreRejectionProbability(100, 25, 2)).toBeCloseTo(50 / 101, 12)
    expect(sreRejectionProbability(100, 25, 2)).toBeCloseTo(0.495, 3)
    expect(sreRejectionProbability(100, 50, 2)).toBe(0) // accepts/requests ≥ 1/K: nothing rejected
    expect(sreRejectionProbability(0, 0, 2)).toBe(0)
  })

  it('never holds a client whose requests are accepted', () => {
    const pacer = sreThrottling().create({ now: T0, random: () => 0 })
    for (let i = 0; i < 100; i++) {
      expect(pacer.delayMs(T0 + i * 100, 1)).toBe(0)
      pacer.onSend(T0 + i * 100, 1)
      pacer.onResult(T0 + i * 100 + 10, ok)
    }
  })

  it('rejects locally when the backend rejects, one step per rejection, each counted in requests', () => {
    const draws = [0.5, 0.3, 0.3, 0.9] // the first draw is UB's per-client backoff cap
    const pacer = sreThrottling({ rejectionDelayMs: 1000 }).create({ now: T0, random: () => draws.shift() ?? 0.99 })
    pacer.onSend(T0, 1)
    // 1 request, 0 accepts: p = 1/2; 0.3 rejects → p = 2/3; 0.3 rejects → p = 3/4; 0.9 passes.
    pacer.onResult(T0 + 10, throttled)
    expect(pacer.delayMs(T0 + 10, 1)).toBe(2000)
    expect(pacer.delayMs(T0 + 2010, 1)).toBe(0)
    expect(pacer.toJSON(T0 + 10).localRejections).toBe(2)
    expect(pacer.toJSON(T0 + 2010).probability).toBeCloseTo(3 / 4, 12)
  })

  it('keeps rejecting most tries while nothing is accepted (p = R/(R+1))', () => {
    const pacer = sreThrottling().create({ now: T0, random: () => 0.9 })
    for (let i = 0; i < 20; i++) {
      pacer.onSend(T0 + i * 1000, 1)
      pacer.onResult(T0 + i * 1000, throttled)
    }
    expect(pacer.toJSON(T0 + 20_000).probability).toBeGreaterThan(0.9)
    expect(pacer.delayMs(T0 + 19_000, 1)).toBeGreaterThan(0)
  })

  it('with a draw above p, lets the try through', () => {
    const pacer = sreThrottling().create({ now: T0, random: () => 0.99 })
    pacer.onSend(T0, 1)
    pacer.onResult(T0, throttled) // p = 1/2
    expect(pacer.delayMs(T0, 1)).toBe(0)
  })

  it('backs off after a server 429 like UB', () => {
    const pacer = sreThrottling().create({ now: T0, random: () => 0 })
    expect(pacer.retryDelayMs!(T0, 1, throttled)).toBe(100)
  })
})
