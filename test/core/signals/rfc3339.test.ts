import { describe, expect, it } from 'vitest'
import { parseRfc3339 } from '../../../src/core/signals/rfc3339.js'

describe('parseRfc3339', () => {
  it.each([
    ['Z', '2024-04-03T12:34:56Z', Date.UTC(2024, 3, 3, 12, 34, 56)],
    ['lower-case z and t', '2024-04-03t12:34:56z', Date.UTC(2024, 3, 3, 12, 34, 56)],
    ['fraction', '2024-04-03T12:34:56.789Z', Date.UTC(2024, 3, 3, 12, 34, 56, 789)],
    ['long fraction truncated to ms', '2024-04-03T12:34:56.123456789Z', Date.UTC(2024, 3, 3, 12, 34, 56, 123)],
    ['positive offset', '2024-04-03T14:34:56+02:00', Date.UTC(2024, 3, 3, 12, 34, 56)],
    ['negative offset', '2024-04-03T07:04:56-05:30', Date.UTC(2024, 3, 3, 12, 34, 56)],
    ['space separator', '2024-04-03 12:34:56Z', Date.UTC(2024, 3, 3, 12, 34, 56)],
  ])('reads %s', (_label, text, expected) => {
    expect(parseRfc3339(text)).toBe(expected)
  })

  it.each([
    ['no offset', '2024-04-03T12:34:56'],
    ['date only', '2024-04-03'],
    ['month 13', '2024-13-03T12:34:56Z'],
    ['30 February', '2024-02-30T12:34:56Z'],
    ['empty fraction', '2024-04-03T12:34:56.Z'],
    ['trailing junk', '2024-04-03T12:34:56Zjunk'],
    ['offset without colon', '2024-04-03T12:34:56+0200'],
    ['epoch seconds', '1712147696'],
  ])('rejects %s', (_label, text) => {
    expect(parseRfc3339(text)).toBeUndefined()
  })
})
