import { describe, expect, it } from 'vitest'
import { ATB_CONSTANTS } from '../../../src/core/pacers/atb-constants.js'
import { LaneTimeScale, parseTimeScale } from '../../../src/core/pacers/atb-time-scale.js'

const { drainBandLowMs, drainBandHighMs, drainReferenceMs } = ATB_CONSTANTS

describe('LaneTimeScale: how long the quota lasted sets a status-only lane\'s time scale', () => {
  it('keeps the paper scale (1) for a drain within the band it spans at k = 1', () => {
    for (const drainMs of [drainBandLowMs, 60_000, 124_000, drainBandHighMs]) {
      const scale = new LaneTimeScale(ATB_CONSTANTS)
      scale.noteFirstCongestion(drainMs, 5)
      expect(scale.value).toBe(1)
    }
  })

  it('runs faster on a drain below the band: a quota 10 times faster lasts a tenth as long', () => {
    const fast = new LaneTimeScale(ATB_CONSTANTS)
    fast.noteFirstCongestion(12_000, 5)
    // Against 60 s, the middle of the band's edge (30 s) and the k = 1 median (120 s).
    expect(fast.value).toBeCloseTo(12_000 / Math.sqrt(drainBandLowMs * drainReferenceMs), 9)
    expect(fast.value).toBeCloseTo(0.2, 9)
  })

  it('measures no faster scale from a burst: its first 429 comes a round trip after its first admission', () => {
    const burst = new LaneTimeScale(ATB_CONSTANTS)
    burst.noteFirstCongestion(40, 5, false)
    expect(burst.value).toBe(1)
    // A long drain is a slower quota whoever else was in flight.
    const slow = new LaneTimeScale(ATB_CONSTANTS)
    slow.noteFirstCongestion(1_200_000, 5, false)
    expect(slow.value).toBeCloseTo(1_200_000 / drainReferenceMs, 9)
  })

  it('measures no faster scale from a lane that sent as fast as its answers came (a script looping over items)', () => {
    // Sends 20 ms apart, each within the 20 ms answer time of the one before: the lane's own speed.
    const loop = (scale: LaneTimeScale, gapMs: number, k: number) => {
      let t = 0
      for (let i = 0; i < 10; i++) {
        scale.noteSend(t, 0, i > 0)
        scale.noteAnswer(t + 20 * k, t, true)
        t += (20 + gapMs) * k
      }
      scale.noteFirstCongestion(t - 20 * k, 10)
    }
    const script = new LaneTimeScale(ATB_CONSTANTS)
    loop(script, 0, 1)
    expect(script.value).toBe(1)
    // The same lane with its calls arriving a second apart was not saturated: a faster quota.
    for (const k of [0.5, 1, 2]) {
      const paced = new LaneTimeScale(ATB_CONSTANTS)
      loop(paced, 1000, k)
      expect(paced.value).toBeCloseTo((k * (10 * 1020 - 20)) / Math.sqrt(drainBandLowMs * drainReferenceMs), 9)
    }
    // Sends with another attempt out are eager too.
    const concurrent = new LaneTimeScale(ATB_CONSTANTS)
    for (let i = 0; i < 10; i++) concurrent.noteSend(i * 1000, 1, true)
    concurrent.noteFirstCongestion(9_000, 10)
    expect(concurrent.value).toBe(1)
  })

  it('scales with a drain beyond that: a slower quota lasts longer', () => {
    const slow = new LaneTimeScale(ATB_CONSTANTS)
    slow.noteFirstCongestion(60 * 124_000, 5)
    expect(slow.value).toBeCloseTo((60 * 124_000) / drainReferenceMs, 9)
  })

  it('reads a long drain from one admission, a short one only from several, nothing from a lane never admitted', () => {
    // Coming late only ever shortens a drain: one admission 5,000 s before the first 429 is a slow quota.
    const one = new LaneTimeScale(ATB_CONSTANTS)
    one.noteFirstCongestion(5_000_000, 1)
    expect(one.value).toBeCloseTo(5_000_000 / ATB_CONSTANTS.drainReferenceMs)
    // A short drain needs more: a lane that came late to a quota others had nearly drained reads it short.
    const lateShort = new LaneTimeScale(ATB_CONSTANTS)
    lateShort.noteFirstCongestion(5_000, 3)
    expect(lateShort.value).toBe(1)
    const never = new LaneTimeScale(ATB_CONSTANTS)
    never.noteFirstCongestion(undefined, 0)
    expect(never.value).toBe(1)
  })

  it('measures once: a later spell of congestion says how the lane paces, not how long the quota lasted', () => {
    const scale = new LaneTimeScale(ATB_CONSTANTS)
    scale.noteFirstCongestion(1_200_000, 5)
    scale.noteFirstCongestion(12_000, 50)
    expect(scale.value).toBeCloseTo(10, 9)
  })

  it('resumes a saved measurement and rejects an implausible one', () => {
    expect(parseTimeScale({ drain: 10, measured: true })).toEqual({ drain: 10, measured: true })
    for (const bad of [undefined, null, 3, { drain: 0, measured: true }, { drain: -1, measured: true }, { drain: Infinity, measured: true }, { drain: 1e9, measured: true }, { drain: 2 }, { drain: '2', measured: true }]) {
      expect(parseTimeScale(bad)).toBeUndefined()
    }
  })
})

describe('LaneTimeScale: whether a lane drained the quota itself', () => {
  /** `count` sends, each answered after 20 ms and the next sent `gapMs` after that answer. */
  const traffic = (scale: LaneTimeScale, count: number, gapMs: number) => {
    let t = 0
    for (let i = 0; i < count; i++) {
      scale.noteSend(t, 0, i > 0)
      scale.noteAnswer(t + 20, t, true)
      t += 20 + gapMs
    }
  }

  it('a lane that sent as fast as its answers came, with minSamples admissions, drained it itself', () => {
    const loop = new LaneTimeScale(ATB_CONSTANTS)
    traffic(loop, 10, 0)
    loop.noteQuotaReached(ATB_CONSTANTS.minSamples)
    expect(loop.judged).toBe(true)
    expect(loop.drainedItself).toBe(true)
  })

  it('one with fewer admissions, or one sending at its own pace, did not', () => {
    const few = new LaneTimeScale(ATB_CONSTANTS)
    traffic(few, 10, 0)
    few.noteQuotaReached(ATB_CONSTANTS.minSamples - 1)
    expect(few.drainedItself).toBe(false)
    // A second before each send: a client's own arrivals, not a backlog.
    const paced = new LaneTimeScale(ATB_CONSTANTS)
    traffic(paced, 10, 1_000)
    paced.noteQuotaReached(10)
    expect(paced.drainedItself).toBe(false)
  })

  it('is judged once, when the lane first reaches the quota', () => {
    const scale = new LaneTimeScale(ATB_CONSTANTS)
    traffic(scale, 10, 1_000)
    scale.noteQuotaReached(10)
    traffic(scale, 20, 0)
    scale.noteQuotaReached(30)
    expect(scale.drainedItself).toBe(false)
    // The first congestion judges it too, if nothing did before.
    const first = new LaneTimeScale(ATB_CONSTANTS)
    traffic(first, 10, 0)
    first.noteFirstCongestion(5_000, ATB_CONSTANTS.minSamples)
    expect(first.judged).toBe(true)
    expect(first.drainedItself).toBe(true)
  })
})
