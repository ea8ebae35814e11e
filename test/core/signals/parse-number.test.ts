import { describe, expect, it } from 'vitest'
import { parseCount, parseNonNegativeDecimal } from '../../../src/core/signals/parse-number.js'

describe('parseNonNegativeDecimal', () => {
  it.each([
    ['0', 0],
    ['120', 120],
    [' 1.5 ', 1.5],
    ['1470173023.123', 1470173023.123],
  ])('reads %j', (text, expected) => {
    expect(parseNonNegativeDecimal(text)).toBe(expected)
  })

  it.each(['', '-1', '+1', '1e3', '0x10', 'Infinity', 'NaN', '1.', '.5', '1.2.3', '12abc', '١٢', '9'.repeat(40)])(
    'rejects %j',
    (text) => {
      expect(parseNonNegativeDecimal(text)).toBeUndefined()
    },
  )
})

describe('parseCount', () => {
  it('reads the first member of a duplicated field', () => {
    expect(parseCount('5, 7')).toBe(5)
    expect(parseCount(undefined)).toBeUndefined()
  })
})
