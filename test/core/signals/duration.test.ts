import { describe, expect, it } from 'vitest'
import { parseDurationMs } from '../../../src/core/signals/duration.js'

describe('parseDurationMs', () => {
  it.each([
    ['1s', 1000],
    ['6m0s', 360_000],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
    ['7.66s', 7660],
    ['0', 0],
    ['0s', 0],
    ['30s', 30_000],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['1500μs', 1.5],
    ['2000000ns', 2],
    ['+5s', 5000],
    ['.5s', 500],
    ['12', 12_000], // bare number: seconds (leniency for OpenAI-compatible servers)
  ])('reads %s', (text, expected) => {
    expect(parseDurationMs(text)).toBeCloseTo(expected, 9)
  })

  it.each(['', '-1s', 's', '1x', '1s2', '1 s', '1.2.3s', 'Infinity', '1e3s', '5us?', '+'])('rejects %j', (text) => {
    expect(parseDurationMs(text)).toBeUndefined()
  })
})
