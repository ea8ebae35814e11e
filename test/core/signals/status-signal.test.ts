import { describe, expect, it } from 'vitest'
import { readSignals, statusSignal } from '../../../src/core/signals/index.js'

describe('statusSignal', () => {
  const noFields = { get: () => null }

  it('says what the reader says for a status without fields, shared and frozen', () => {
    for (const status of [200, 204, 429, 503, 500]) {
      const signal = statusSignal(status, 1_000)
      expect(signal).toEqual(readSignals(status, noFields, 1_000))
      expect(Object.isFrozen(signal)).toBe(true)
      expect(statusSignal(status, 2_000)).toBe(signal)
    }
  })

  it('does not cache statuses outside 100–999', () => {
    expect(statusSignal(42, 1_000)).toEqual(readSignals(42, noFields, 1_000))
    expect(statusSignal(42, 1_000)).not.toBe(statusSignal(42, 1_000))
  })
})
