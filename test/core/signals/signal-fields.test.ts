import { describe, expect, it } from 'vitest'
import type { HeaderSource } from '../../../src/core/signals/header-source.js'
import { readSignals } from '../../../src/core/signals/read-signals.js'
import { isSignalField, SIGNAL_HEADER_NAMES, signalFields } from '../../../src/core/signals/signal-fields.js'
import { headersOf, NOW } from './fixtures.js'

describe('signalFields (the fast path)', () => {
  it('returns nothing for a Headers without rate-limit fields', () => {
    const headers = headersOf({ 'content-type': 'application/json', date: 'Tue, 23 Sep 2025 12:00:00 GMT', 'x-request-id': 'abc' })
    expect(signalFields(headers)).toBeUndefined()
  })

  it('walks an enumerable source once and never calls its get', () => {
    const enumerable = {
      forEach(callback: (value: string, name: string) => void) {
        callback('application/json', 'content-type')
        callback('abc', 'x-request-id')
      },
      get(): string | null {
        throw new Error('get must not be called on the fast path')
      },
    }
    expect(readSignals(200, enumerable, NOW)).toStrictEqual({ kind: 'ok', status: 200 })
  })

  it('keeps only the understood fields, and the Date, from an enumerable source', () => {
    const fields = signalFields(
      headersOf({ 'Retry-After': '5', Date: 'Tue, 23 Sep 2025 12:00:00 GMT', 'Content-Type': 'text/plain' }),
    )
    expect(fields?.get('retry-after')).toBe('5')
    expect(fields?.get('date')).toBe('Tue, 23 Sep 2025 12:00:00 GMT')
    expect(fields?.get('content-type')).toBeNull()
  })

  it('lower-cases names from a source that enumerates them in mixed case', () => {
    const map = new Map([['Retry-After', '7']])
    const source = { forEach: map.forEach.bind(map), get: () => null }
    expect(readSignals(429, source, NOW).retryAt).toBe(NOW + 7000)
  })

  it('probes a get-only source with one get per sentinel name', () => {
    let calls = 0
    const source: HeaderSource = {
      get() {
        calls++
        return null
      },
    }
    expect(signalFields(source)).toBeUndefined()
    expect(calls).toBe(SIGNAL_HEADER_NAMES.length)
  })

  it('keeps every field name a reader asks for (so the walk never drops one)', () => {
    const asked = new Set<string>()
    const everything: HeaderSource = {
      get(name) {
        asked.add(name)
        return '1'
      },
    }
    readSignals(429, everything, NOW)
    asked.delete('date')
    expect(asked.size).toBeGreaterThan(30)
    expect([...asked].filter((name) => !isSignalField(name))).toStrictEqual([])
  })

  it.each(['content-type', 'x-request-id', 'age', 'date', 'x-ratelimi', 'rate-limit', 'beta-feature', 'x-should'])('does not keep %s', (name) => {
    expect(isSignalField(name)).toBe(false)
  })

  it.each(['beta-ratelimit', 'beta-ratelimit-policy', 'x-should-retry'])('keeps %s and lists it for get-only sources', (name) => {
    expect(isSignalField(name)).toBe(true)
    expect(SIGNAL_HEADER_NAMES).toContain(name)
  })
})
