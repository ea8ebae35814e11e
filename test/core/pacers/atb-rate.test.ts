import { describe, expect, it } from 'vitest'
import { createOutcomeLog } from '../../../src/core/pacers/atb-rate.js'

describe('outcome log', () => {
  it('measures admissions per second over the window', () => {
    const log = createOutcomeLog(100)
    for (let i = 1; i <= 30; i++) log.add(i * 1000, i % 3 !== 0) // 20 admitted, 10 rejected in 30 s
    expect(log.counts(30_000, 30_000)).toEqual({ admitted: 20, rejected: 10 })
    expect(log.admittedPerSecond(30_000, 10_000, 0, 0)).toBeCloseTo(6 / 10, 12) // 21..30: 21, 24, 27, 30 rejected
  })

  it('widens the window to the last minCount admissions for slow lanes', () => {
    const log = createOutcomeLog(100)
    for (let i = 1; i <= 6; i++) log.add(i * 60_000, true) // one a minute
    const now = 6 * 60_000
    expect(log.admittedPerSecond(now, 60_000, 0, 0)).toBeCloseTo(1 / 60, 12) // a fixed minute sees 1
    // The last 4 span 3 min (from just before the 4th newest): 4 in ~180 s.
    expect(log.admittedPerSecond(now, 60_000, 0, 0, 4)).toBeCloseTo(4 / 180.001, 6)
  })

  it('never averages over less than minSpanMs, nor before `since`', () => {
    const log = createOutcomeLog(100)
    log.add(1000, true)
    expect(log.admittedPerSecond(1000, 60_000, 0, 10_000)).toBeCloseTo(0.1, 12)
    log.add(2000, true)
    expect(log.admittedPerSecond(2000, 60_000, 1500, 0)).toBeCloseTo(1 / 0.5, 12)
  })

  it('measures the span of minCount admissions instead of assuming minSpanMs', () => {
    const log = createOutcomeLog(100)
    // A lone script on a fast quota: 29 admissions over 5.8 s since its first 429.
    for (let i = 1; i <= 29; i++) log.add(i * 200, true)
    expect(log.admittedPerSecond(6000, 60_000, 0, 10_000, 6)).toBeCloseTo(29 / 6, 12)
    // Fewer than minCount in the short span: the floor still applies (5 over 10 s, not 5 over 1 s).
    const few = createOutcomeLog(100)
    for (let i = 1; i <= 5; i++) few.add(i * 200, true)
    expect(few.admittedPerSecond(1000, 60_000, 0, 10_000, 6)).toBeCloseTo(0.5, 12)
    // The same five with minCount 5 read their own span.
    expect(few.admittedPerSecond(1000, 60_000, 0, 10_000, 5)).toBeCloseTo(5, 12)
  })

  it('keeps at most maxEntries, and keeps time order under a clock that steps back', () => {
    const log = createOutcomeLog(3)
    for (let i = 0; i < 10; i++) log.add(i, true)
    log.add(5, false)
    expect(log.toJSON()).toEqual([[8, 1], [9, 1], [9, 0]])
    expect(log.lastAdmittedAt()).toBe(9)
  })

  it('counts correctly after the ring has wrapped around many times', () => {
    const log = createOutcomeLog(8)
    for (let i = 1; i <= 100; i++) log.add(i * 1000, i % 2 === 0) // keeps 93..100
    expect(log.toJSON().map(([t]) => t)).toEqual([93, 94, 95, 96, 97, 98, 99, 100].map((s) => s * 1000))
    expect(log.counts(100_000, 4_500)).toEqual({ admitted: 3, rejected: 2 }) // 96..100
    expect(log.lastAdmittedAt()).toBe(100_000)
  })
})
