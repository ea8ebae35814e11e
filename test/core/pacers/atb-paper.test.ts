import { describe, expect, it } from 'vitest'
import { paperAtb } from '../../../src/core/pacers/atb.js'
import type { Signal } from '../../../src/core/types.js'

const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
const make = (options = {}) => paperAtb(options).create({ now: 0, random: () => 0.5 })

describe('paperAtb (the paper\'s ATB with the evaluation constants)', () => {
  it('starts at 40/min → 0.67/s with one token, and sleeps (1 − tokens)/r', () => {
    const pacer = make()
    expect(pacer.ratePerSecond).toBe(0.67)
    expect(pacer.tokens(0)).toBe(1)
    expect(pacer.delayMs(0, 1)).toBe(0)
    pacer.onSend(0, 1)
    expect(pacer.delayMs(0, 1)).toBe(Math.ceil((1 / 0.67) * 1000)) // 1493 ms
    expect(pacer.delayMs(1000, 1)).toBe(Math.ceil(((1 - 0.67) / 0.67) * 1000)) // 493 ms
    expect(pacer.delayMs(1493, 1)).toBe(0)
  })

  it('grows ×1.2 per success (at least +0.01/s), rounded to 2 decimals, without an upper bound', () => {
    const pacer = make()
    const rates: number[] = []
    for (let i = 0; i < 4; i++) {
      pacer.onResult(i, ok)
      rates.push(pacer.ratePerSecond)
    }
    expect(rates).toEqual([0.8, 0.96, 1.15, 1.38])
    for (let i = 0; i < 60; i++) pacer.onResult(10 + i, ok)
    expect(pacer.ratePerSecond).toBeGreaterThan(10_000)
  })

  it('uses the +0.01 floor when ×1.2 adds less', () => {
    const pacer = make({ initialRatePerSecond: 0.03 })
    pacer.onResult(0, ok)
    expect(pacer.ratePerSecond).toBe(0.04) // max(0.04, 0.036)
  })

  it('halves on a 429, rounds, floors at 0.01 and empties the bucket', () => {
    const pacer = make()
    pacer.onResult(0, ok) // 0.8
    pacer.onResult(1, ok) // 0.96
    pacer.onResult(2, throttled)
    expect(pacer.ratePerSecond).toBe(0.48)
    // Emptied; last_used is still 0 (creation), so the refill counts from there at the new rate.
    expect(pacer.tokens(2)).toBeCloseTo((2 / 1000) * 0.48, 12)
    pacer.onResult(3, throttled)
    expect(pacer.ratePerSecond).toBe(0.24)
    for (let i = 0; i < 10; i++) pacer.onResult(4 + i, throttled)
    expect(pacer.ratePerSecond).toBe(0.01)
  })

  it('refills from the last acquire at the current rate, capped at B = 40', () => {
    const pacer = make()
    pacer.onSend(0, 1)
    pacer.onResult(10, throttled) // r = 0.34 (0.335 rounds up), tokens 0, last_used 0
    expect(pacer.ratePerSecond).toBe(0.34)
    // tokens at 1000 ms = 1 s · 0.34; sleep (1 − 0.34)/0.34 s
    expect(pacer.delayMs(1000, 1)).toBe(Math.ceil(((1 - 0.34) / 0.34) * 1000))
    expect(pacer.tokens(1_000_000)).toBe(40)
    // 40 attempts back to back after a quiet spell: the burst the findings warn about.
    for (let i = 0; i < 40; i++) {
      expect(pacer.delayMs(1_000_000, 1)).toBe(0)
      pacer.onSend(1_000_000, 1)
    }
    expect(pacer.delayMs(1_000_000, 1)).toBeGreaterThan(0)
  })

  it('switches from α to β once the rate reaches the last congestion rate', () => {
    const pacer = make({ initialRatePerSecond: 0.8, firstStep: 1.5, secondStep: 1.1 })
    pacer.onResult(0, throttled) // r_c = 0.8, r = 0.4
    pacer.onResult(1, ok)
    expect(pacer.ratePerSecond).toBe(0.6) // α
    pacer.onResult(2, ok)
    expect(pacer.ratePerSecond).toBe(0.9) // α (0.6 < 0.8)
    pacer.onResult(3, ok)
    expect(pacer.ratePerSecond).toBe(0.99) // β (0.9 ≥ 0.8)
  })

  it('does not change the rate on a transport error, and retries it after 1 s', () => {
    const pacer = make()
    pacer.onResult(0, { kind: 'error', status: 0 })
    expect(pacer.ratePerSecond).toBe(0.67)
    expect(pacer.retryDelayMs!(0, 1, { kind: 'error', status: 0 })).toBe(1000)
    expect(pacer.retryDelayMs!(0, 1, throttled)).toBe(0)
  })

  it('round-trips its state and refuses state from the future', () => {
    const pacer = make()
    pacer.onSend(0, 1)
    pacer.onResult(100, throttled)
    const state = JSON.parse(JSON.stringify(pacer.toJSON(200)))
    const resumed = paperAtb().create({ now: 300, random: () => 0.5, state })
    expect(resumed.ratePerSecond).toBe(0.34)
    expect(resumed.delayMs(300, 1)).toBe(pacer.delayMs(300, 1))
    const future = paperAtb().create({ now: 300, random: () => 0.5, state: { ...state, lastUsedAt: 1e15 } })
    expect(future.ratePerSecond).toBe(0.67)
    expect(future.delayMs(300, 1)).toBe(0)
  })
})
