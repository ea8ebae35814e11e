// Strategy options that make no sense throw, naming the option, as createClient's do.
import { describe, expect, it } from 'vitest'
import { aatb, AATB_DEFAULTS } from '../../../src/core/pacers/aatb.js'
import { atb, ATB_DEFAULTS } from '../../../src/core/pacers/atb.js'

describe('atb() and aatb() options', () => {
  it('take every option at its default, and values in range', () => {
    expect(() => atb({ ...ATB_DEFAULTS })).not.toThrow()
    expect(() => atb({ plateauMs: 0, growthPerSecond: 0, maxRatePerSecond: Infinity, honourRetryAfter: false })).not.toThrow()
    expect(() => atb({ quotaPerSecond: 500 / 60 })).not.toThrow()
    expect(() => aatb({ reportWindowMs: 10_000, atb: { minSpanMs: 5_000 } })).not.toThrow()
  })

  it('throw a TypeError naming the option for a value out of range', () => {
    expect(() => atb({ coldStartRatePerSecond: 0 })).toThrow(/atb option `coldStartRatePerSecond` must be a number > 0; received 0/)
    expect(() => atb({ plateauMs: -1 })).toThrow(/`plateauMs` must be a finite number ≥ 0; received -1/)
    expect(() => atb({ growthPerSecond: Number.NaN })).toThrow(/`growthPerSecond`/)
    expect(() => atb({ calmAfterMs: '600000' as unknown as number })).toThrow(/`calmAfterMs`.*\(string\)/)
    expect(() => atb({ honourRetryAfter: 'yes' as unknown as boolean })).toThrow(/`honourRetryAfter` must be a boolean/)
    expect(() => atb({ minRatePerSecond: 2, maxRatePerSecond: 1 })).toThrow(/`maxRatePerSecond` must be at least minRatePerSecond/)
    expect(() => atb({ quotaPerSecond: 0 })).toThrow(/`quotaPerSecond` must be a number > 0; received 0/)
    expect(() => atb({ quotaPerSecond: Infinity })).toThrow(/`quotaPerSecond`/)
    expect(() => atb({ quotaPerSecond: '500/min' as unknown as number })).toThrow(/`quotaPerSecond`.*\(string\)/)
    expect(() => aatb({ busyFraction: -5 })).toThrow(/aatb option `busyFraction`/)
    expect(() => aatb({ atb: { rateMargin: 0 } })).toThrow(/atb option `rateMargin`/)
  })

  it('expose at most 12 options (aatb at most 6 of its own); an internal constant is not one of them', () => {
    expect(Object.keys(ATB_DEFAULTS).length).toBeLessThanOrEqual(12)
    expect(Object.keys(AATB_DEFAULTS).filter((name) => name !== 'atb').length).toBeLessThanOrEqual(6)
    expect(() => atb({ windowMs: 30_000 } as object)).toThrow(/atb has no option `windowMs` \(its options: minSpanMs, /)
    expect(() => atb({ lumpPlateauMs: 60_000 } as object)).toThrow(/atb has no option `lumpPlateauMs` \(/)
    expect(() => aatb({ confirmWindowMs: 1_000 } as object)).toThrow(/aatb has no option `confirmWindowMs`/)
  })

  it('throw for an option they do not know (a misspelt one would be ignored)', () => {
    expect(() => atb({ windowMS: 1000 } as object)).toThrow(TypeError)
    expect(() => atb({ windowMS: 1000 } as object)).toThrow(/`windowMS`/)
    expect(() => aatb({ reportWindow: 1000 } as object)).toThrow(/`reportWindow`/)
  })

  it('name the option a typo was meant to be', () => {
    expect(() => atb({ platauMs: 1000 } as object)).toThrow(/no option `platauMs`; did you mean `plateauMs`\?/)
    expect(() => atb({ calmAfterMS: 1000 } as object)).toThrow(/did you mean `calmAfterMs`\?/)
    expect(() => atb({ rateMragin: 2 } as object)).toThrow(/did you mean `rateMargin`\?/)
    expect(() => atb({ burst: 2 } as object)).not.toThrow(/did you mean/)
  })
})
