import { describe, expect, it } from 'vitest'
import { parseHttpDate } from '../../../src/core/signals/http-date.js'
import { NOW } from './fixtures.js'

const NOV_6_1994 = Date.UTC(1994, 10, 6, 8, 49, 37)

describe('parseHttpDate', () => {
  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT', NOV_6_1994],
    ['obsolete RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT', NOV_6_1994],
    ['asctime, space-padded day', 'Sun Nov  6 08:49:37 1994', NOV_6_1994],
    ['asctime, two-digit day', 'Thu Nov 24 08:49:37 1994', Date.UTC(1994, 10, 24, 8, 49, 37)],
    ['surrounding whitespace', '  Tue, 23 Sep 2025 12:00:00 GMT ', NOW],
    ['leap day', 'Thu, 29 Feb 2024 00:00:00 GMT', Date.UTC(2024, 1, 29)],
    ['leap second rolls over', 'Sat, 31 Dec 2016 23:59:60 GMT', Date.UTC(2017, 0, 1)],
  ])('reads %s', (_label, text, expected) => {
    expect(parseHttpDate(text, NOW)).toBe(expected)
  })

  it.each([
    ['empty', ''],
    ['a delay', '120'],
    ['lower-case month', 'Sun, 06 nov 1994 08:49:37 GMT'],
    ['unknown day name', 'Sux, 06 Nov 1994 08:49:37 GMT'],
    ['not GMT', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['impossible date', 'Mon, 31 Feb 2025 00:00:00 GMT'],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['minute 60', 'Sun, 06 Nov 1994 08:60:00 GMT'],
    ['letters in the year', 'Sun, 06 Nov 19x4 08:49:37 GMT'],
    ['RFC 850 with a short day name', 'Sun, 06-Nov-94 08:49:37 GMT'],
    ['RFC 850 with a four-digit year', 'Sunday, 06-Nov-1994 08:49:37 GMT'],
    ['ISO 8601', '1994-11-06T08:49:37Z'],
    ['JavaScript Date.toString()', 'Tue Feb 16 2021 09:02:42 GMT+0100 (Central European Standard Time)'],
    ['asctime with a bad day', 'Sun Nov 0x 08:49:37 1994'],
  ])('rejects %s', (_label, text) => {
    expect(parseHttpDate(text, NOW)).toBeUndefined()
  })

  it('resolves an RFC 850 two-digit year within 50 years ahead, else in the past century', () => {
    // Now is 2025: "74" is 2074 (49 years ahead), "76" would be 51 years ahead so 1976.
    expect(parseHttpDate('Monday, 01-Jan-74 00:00:00 GMT', NOW)).toBe(Date.UTC(2074, 0, 1))
    expect(parseHttpDate('Thursday, 01-Jan-76 00:00:00 GMT', NOW)).toBe(Date.UTC(1976, 0, 1))
    expect(parseHttpDate('Tuesday, 23-Sep-25 12:00:00 GMT', NOW)).toBe(NOW)
  })
})
