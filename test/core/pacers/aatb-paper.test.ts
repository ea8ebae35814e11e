import { describe, expect, it } from 'vitest'
import { paperAatb } from '../../../src/core/pacers/aatb.js'
import type { Aggregate, Signal } from '../../../src/core/types.js'

const T0 = 1_700_000_000_000
const random = () => 0.5 // U(0,1) → 0.5 s jitter; U(-2,2) → 0
const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
const reply = (extra: Partial<Aggregate> = {}): Aggregate =>
  ({ activeClients: 4, totalAttempts: 40, throttledReports: 2, windowMs: 30_000, quotaPerSecond: 80 / 60, ...extra })

describe('paperAatb()', () => {
  it('starts at 0.67 tokens/s with one token, and does not change its rate on success', () => {
    const strategy = paperAatb()
    expect(strategy.name).toBe('aatb-paper')
    const pacer = strategy.create({ now: T0, random })
    expect(pacer.ratePerSecond).toBe(0.67)
    expect(pacer.delayMs(T0, 1)).toBe(0)
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 100, ok)
    expect(pacer.ratePerSecond).toBe(0.67)
    expect(pacer.delayMs(T0 + 100, 1)).toBeCloseTo(1000 / 0.67 - 100, 6)
  })

  it('on a 429 without an aggregate: waits k·60/token_rate + U(0,1) with the initial 15/min, and cuts heavy (÷3)', () => {
    const pacer = paperAatb().create({ now: T0, random })
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 100, throttled)
    // avg load 0 → the client is not below half of it → heavy cut; wait = round(1·60/15 + 0.5, 2) = 4.5 s
    expect(pacer.ratePerSecond).toBe(0.22)
    expect(pacer.delayMs(T0 + 100, 1)).toBe(4_500)
    expect(pacer.reportDueAt!(T0 + 100)).toBe(T0 + 100)
    expect(pacer.takeReport!(T0 + 100)).toEqual({ attempts: 1, throttled: 1 })
  })

  it('re-runs the congestion rules with the reply to its congestion report', () => {
    const pacer = paperAatb().create({ now: T0, random })
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 100, throttled)
    pacer.takeReport!(T0 + 100)
    pacer.onAggregate!(T0 + 150, reply())
    // k = 2 + 1 → 3 · 0.75 + 0.5 = 2.75 s; 1 attempt < 0.5 · 40/4 → light cut ÷2
    expect(pacer.delayMs(T0 + 150, 1)).toBe(T0 + 100 + 2_750 - (T0 + 150))
    expect(pacer.ratePerSecond).toBe(0.34)
    // the bucket holds 1.1 tokens after congestion: the gate, not the bucket, decides
    pacer.onSend(T0 + 2_850, 1)
    expect(pacer.delayMs(T0 + 2_850, 1)).toBeGreaterThan(0)
  })

  it('routine update: pauses a report window when anyone reported a 429', () => {
    const pacer = paperAatb().create({ now: T0, random })
    expect(pacer.reportDueAt!(T0)).toBe(T0 + 30_000)
    expect(pacer.takeReport!(T0 + 1_000)).toBeUndefined()
    pacer.onSend(T0 + 1_000, 1)
    pacer.onResult(T0 + 1_100, ok)
    expect(pacer.takeReport!(T0 + 30_000)).toEqual({ attempts: 1, throttled: 0 })
    pacer.onAggregate!(T0 + 30_010, reply({ throttledReports: 1 }))
    expect(pacer.delayMs(T0 + 30_010, 1)).toBe(30_000) // report_window + U(-2,2) with U = 0
    expect(pacer.reportDueAt!(T0 + 30_010)).toBe(T0 + 60_000)
  })

  it('routine update: grows ×1.4 when light and ×1.2 when heavy, at most once per window', () => {
    const light = paperAatb().create({ now: T0, random })
    light.takeReport!(T0 + 30_000)
    light.onAggregate!(T0 + 30_000, reply({ throttledReports: 0 }))
    expect(light.ratePerSecond).toBe(0.94) // round(0.67 · 1.4, 2)
    const heavy = paperAatb().create({ now: T0, random })
    for (let i = 0; i < 20; i++) heavy.onSend(T0 + i * 1_400, 1)
    heavy.takeReport!(T0 + 30_000)
    heavy.onAggregate!(T0 + 30_000, reply({ throttledReports: 0, totalAttempts: 40, activeClients: 4 }))
    expect(heavy.ratePerSecond).toBe(0.8) // 20 ≥ 0.75 · 10 → round(0.67 · 1.2, 2)
  })

  it('skips its routine report within a report window of its own congestion, and ignores late replies', () => {
    const pacer = paperAatb().create({ now: T0, random })
    pacer.onSend(T0 + 20_000, 1)
    pacer.onResult(T0 + 20_000, throttled)
    pacer.takeReport!(T0 + 20_000)
    expect(pacer.takeReport!(T0 + 30_000)).toBeUndefined()
    expect(pacer.reportDueAt!(T0 + 30_000)).toBe(T0 + 60_000)
    const rate = pacer.ratePerSecond
    pacer.onAggregate!(T0 + 40_000, reply({ throttledReports: 0 })) // 20 s late: the paper timed out at 3 s
    expect(pacer.ratePerSecond).toBe(rate)
  })

  it('takes every constant as an option', () => {
    const pacer = paperAatb({ initialRatePerMinute: 120, reportWindowMs: 10_000 }).create({ now: T0, random })
    expect(pacer.ratePerSecond).toBe(2)
    expect(pacer.reportDueAt!(T0)).toBe(T0 + 10_000)
  })
})
