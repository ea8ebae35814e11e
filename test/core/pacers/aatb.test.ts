import { describe, expect, it } from 'vitest'
import { aatb, AATB_DEFAULTS } from '../../../src/core/pacers/aatb.js'
import { atb } from '../../../src/core/pacers/atb.js'
import type { Aggregate, Pacer, Signal } from '../../../src/core/types.js'

const T0 = 1_700_000_000_000
const random = () => 0.5
const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
const congested = (extra: Partial<Aggregate> = {}): Aggregate =>
  ({ activeClients: 4, totalAttempts: 40, throttledReports: 3, windowMs: 30_000, quotaPerSecond: 2, fairSharePerSecond: 0.5, ...extra })

/** Send whenever allowed, with a 429 every `every`-th attempt; record every delay decision. */
function drive(pacer: Pacer, steps: number, every = 5): number[] {
  const delays: number[] = []
  let now = T0
  for (let i = 1; i <= steps; i++) {
    const delay = pacer.delayMs(now, 1)
    delays.push(delay)
    now += delay
    pacer.onSend(now, 1)
    now += 50
    pacer.onResult(now, i % every === 0 ? throttled : ok)
    delays.push(Math.round(pacer.ratePerSecond * 1000))
  }
  return delays
}

describe('aatb()', () => {
  it('is named aatb and, without aggregates, decides exactly as the default atb()', () => {
    expect(aatb().name).toBe('aatb')
    const plain = drive(atb().create({ now: T0, random }), 60)
    const assisted = drive(aatb().create({ now: T0, random }), 60)
    expect(assisted).toEqual(plain)
    expect(plain.some((d) => d > 0)).toBe(true) // the comparison covers pacing, not only free sends
  })

  it('ignores aggregates while the fleet is calm', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ throttledReports: 0 }))
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 10, ok)
    expect(pacer.delayMs(T0 + 20, 1)).toBe(0)
  })

  it('paces at the fair share once the fleet reported 429s and a local 429 confirmed it', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 100, throttled)
    pacer.onAggregate!(T0 + 200, congested({ fairSharePerSecond: 0.1 })) // one attempt per 10 s
    const plain = atb().create({ now: T0, random })
    plain.onSend(T0, 1)
    plain.onResult(T0 + 100, throttled)
    const now = T0 + 3_000
    expect(pacer.delayMs(now, 1)).toBe(Math.max(plain.delayMs(now, 1), T0 + 10_000 - now))
    expect(pacer.delayMs(T0 + 10_000, 1)).toBe(plain.delayMs(T0 + 10_000, 1))
    expect(pacer.ratePerSecond).toBeLessThanOrEqual(0.1)
  })

  it('falls back to quota / active clients when the server sent no fair share', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: undefined, quotaPerSecond: 1, activeClients: 5 }))
    pacer.onSend(T0, 1)
    expect(pacer.delayMs(T0, 1)).toBe(5_000)
    expect(pacer.delayMs(T0 + 5_000, 1)).toBe(0)
  })

  it('bounds how long an aggregate alone can hold a client back', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: 0.0001 })) // "wait 10 000 s": wrong or hostile
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 10, ok)
    expect(pacer.delayMs(T0 + 10, 1)).toBe(AATB_DEFAULTS.maxAggregatePauseMs - 10)
    // a local 429 confirms the congestion: the longer (still finite) bound applies
    pacer.onResult(T0 + 20, throttled)
    expect(pacer.delayMs(T0 + 20, 1)).toBeGreaterThanOrEqual(AATB_DEFAULTS.maxConfirmedPauseMs - 20)
    expect(pacer.delayMs(T0 + 20, 1)).toBeLessThanOrEqual(AATB_DEFAULTS.maxConfirmedPauseMs)
  })

  it('keeps fleet pacing for the hold time after the last reported 429, then returns to ATB', () => {
    const pacer = aatb({ congestionHoldMs: 60_000, confirmWindowMs: 1_000 }).create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: 0.2 }))
    pacer.onAggregate!(T0 + 30_000, congested({ throttledReports: 0, fairSharePerSecond: 0.2 }))
    pacer.onSend(T0 + 40_000, 1)
    expect(pacer.delayMs(T0 + 40_000, 1)).toBe(5_000)
    pacer.onSend(T0 + 61_000, 1)
    expect(pacer.delayMs(T0 + 61_000, 1)).toBe(0)
  })

  it('ignores stale and nonsensical aggregates', () => {
    const pacer = aatb({ aggregateTtlMs: 90_000 }).create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: 0.1 }))
    pacer.onSend(T0 + 95_000, 1)
    expect(pacer.delayMs(T0 + 95_000, 1)).toBe(0)
    for (const bad of [congested({ activeClients: 0 }), congested({ fairSharePerSecond: -1 }), congested({ totalAttempts: Number.NaN })]) {
      const fresh = aatb().create({ now: T0, random })
      fresh.onAggregate!(T0, bad)
      fresh.onSend(T0, 1)
      expect(fresh.delayMs(T0, 1)).toBe(0)
    }
  })

  it('reports counts every report window while active and promptly after a 429', () => {
    const pacer = aatb().create({ now: T0, random })
    expect(pacer.reportDueAt!(T0)).toBe(Infinity) // nothing happened: nothing to say
    expect(pacer.reportDueAt!(T0, 2)).toBe(T0) // a backlog makes the lane active
    for (let i = 0; i < 3; i++) pacer.onSend(T0 + i, 1)
    expect(pacer.reportDueAt!(T0 + 5)).toBe(T0 + 5) // first activity: report at once
    expect(pacer.takeReport!(T0 + 5)).toEqual({ attempts: 3, throttled: 0 })
    expect(pacer.reportDueAt!(T0 + 6)).toBe(T0 + 5 + 30_000)
    pacer.onSend(T0 + 10, 1)
    pacer.onResult(T0 + 20, { ...throttled, policies: [{ name: 'default', quota: 100, windowMs: 60_000 }] })
    expect(pacer.reportDueAt!(T0 + 20)).toBe(T0 + 20)
    expect(pacer.takeReport!(T0 + 20)).toEqual({ attempts: 1, throttled: 1, quota: { quota: 100, windowMs: 60_000 } })
    pacer.onSend(T0 + 30, 1)
    pacer.onResult(T0 + 40, throttled)
    expect(pacer.reportDueAt!(T0 + 40)).toBe(T0 + 20 + AATB_DEFAULTS.throttleReportIntervalMs) // at most one per interval
    expect(pacer.reportDueAt!(T0 + 40 + 61_000)).toBe(T0 + 40 + 61_000) // the unreported 429 still goes out
  })

  it('persists the inner ATB state and resumes from it', () => {
    const pacer = aatb().create({ now: T0, random })
    drive(pacer, 20)
    const later = T0 + 200_000 // after everything drive() did
    const state = pacer.toJSON(later)
    expect(state).toMatchObject({ kind: 'aatb', version: 1, savedAt: later })
    expect((state.inner as { kind: string }).kind).toBe('atb')
    const resumed = aatb().create({ now: later, random, state: JSON.parse(JSON.stringify(state)) })
    expect(resumed.ratePerSecond).toBe(pacer.ratePerSecond)
    expect(resumed.delayMs(later, 1)).toBe(pacer.delayMs(later, 1))
    // foreign state is ignored
    const fresh = aatb().create({ now: later, random, state: { kind: 'atb', version: 1, savedAt: 0 } })
    expect(fresh.delayMs(later, 1)).toBe(0)
  })
})
