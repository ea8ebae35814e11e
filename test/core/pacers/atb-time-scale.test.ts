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

  it('scales with a drain beyond that: a slower quota lasts longer', () => {
    const slow = new LaneTimeScale(ATB_CONSTANTS)
    slow.noteFirstCongestion(60 * 124_000, 5)
    expect(slow.value).toBeCloseTo((60 * 124_000) / drainReferenceMs, 9)
  })

  it('measures nothing from a lane that came late to a dry quota (under two admissions) or was never admitted', () => {
    const late = new LaneTimeScale(ATB_CONSTANTS)
    late.noteFirstCongestion(5_000_000, 1)
    expect(late.value).toBe(1)
    // A short drain needs more: coming late only shortens it.
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
