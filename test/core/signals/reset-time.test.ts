import { describe, expect, it } from 'vitest'
import { MAX_HORIZON_MS, TimeBase } from '../../../src/core/signals/reset-time.js'
import { headersOf, NOW, NOW_SECONDS } from './fixtures.js'

const DAY_MS = 24 * 60 * 60 * 1000

function timeWith(date?: string): TimeBase {
  return new TimeBase(NOW, headersOf(date === undefined ? {} : { date }))
}

describe('TimeBase.atReset (epoch vs delta by magnitude)', () => {
  it.each([
    ['small number = delay seconds', 30, undefined, NOW + 30_000],
    ['zero delay = now', 0, undefined, NOW],
    ['epoch seconds, no Date', NOW_SECONDS + 60, undefined, NOW + 60_000],
    ['epoch seconds with decimals (Discord)', NOW_SECONDS + 1.5, undefined, NOW + 1500],
    ['epoch ms (Upstash)', NOW + 2500, undefined, NOW + 2500],
    // The server clock runs 10 minutes ahead of ours: its epoch is read against its Date.
    ['epoch seconds through a skewed Date', NOW_SECONDS + 600 + 60, 'Tue, 23 Sep 2025 12:10:00 GMT', NOW + 60_000],
    ['epoch ms through a skewed Date', NOW - 300_000 + 5000, 'Tue, 23 Sep 2025 11:55:00 GMT', NOW + 5000],
    ['past epoch clamps to now', NOW_SECONDS - 3600, undefined, NOW],
    ['past epoch by the server clock clamps to now', NOW_SECONDS + 10, 'Tue, 23 Sep 2025 12:10:00 GMT', NOW],
    ['malformed Date is ignored', NOW_SECONDS + 60, 'yesterday', NOW + 60_000],
    ['a Date years off is ignored', NOW_SECONDS + 60, 'Thu, 01 Jan 1970 00:00:00 GMT', NOW + 60_000],
  ])('%s', (_label, value, date, expected) => {
    expect(timeWith(date).atReset(value)).toBe(expected)
  })

  it.each([
    ['negative', -5],
    ['a delay over a year', 400 * 86_400],
    ['an epoch over a year ahead', NOW_SECONDS + 400 * 86_400],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('ignores %s', (_label, value) => {
    expect(timeWith().atReset(value)).toBeUndefined()
  })

  it('accepts exactly one year and no more', () => {
    expect(timeWith().afterDelay(MAX_HORIZON_MS)).toBe(NOW + MAX_HORIZON_MS)
    expect(timeWith().afterDelay(MAX_HORIZON_MS + 1)).toBeUndefined()
    expect(timeWith().afterDelay(DAY_MS)).toBe(NOW + DAY_MS)
  })

  it('yields nothing when the client clock itself is not finite', () => {
    const time = new TimeBase(Number.NaN, headersOf({}))
    expect(time.afterDelay(1000)).toBeUndefined()
    expect(time.atMoment(NOW)).toBeUndefined()
  })
})
