import { describe, expect, it } from 'vitest'
import type { Signal } from '../../../src/core/types.js'
import { readSignals } from '../../../src/core/signals/read-signals.js'
import { headersOf, NOW } from './fixtures.js'

describe('x-should-retry (OpenAI, Anthropic)', () => {
  it.each<[string, number, Record<string, string>, Signal]>([
    ['false on a 429 is kept', 429, { 'x-should-retry': 'false' }, { kind: 'throttled', status: 429, shouldRetry: false }],
    ['true on a 500 is kept, the kind stays ok', 500, { 'x-should-retry': 'true' }, { kind: 'ok', status: 500, shouldRetry: true }],
    ['true on a 409 (a lock timeout)', 409, { 'X-Should-Retry': 'true' }, { kind: 'ok', status: 409, shouldRetry: true }],
    ['case and spaces do not matter', 529, { 'x-should-retry': ' FALSE ' }, { kind: 'overloaded', status: 529, shouldRetry: false }],
    ['beside a Retry-After', 429, { 'x-should-retry': 'true', 'retry-after': '2' }, { kind: 'throttled', status: 429, retryAt: NOW + 2000, shouldRetry: true }],
    ['anything but true/false is ignored', 500, { 'x-should-retry': '1' }, { kind: 'ok', status: 500 }],
    ['an empty value is ignored', 429, { 'x-should-retry': '' }, { kind: 'throttled', status: 429 }],
    ['a list is ignored', 429, { 'x-should-retry': 'true, false' }, { kind: 'throttled', status: 429 }],
    ['on a success it means nothing', 200, { 'x-should-retry': 'true' }, { kind: 'ok', status: 200 }],
    ['on a redirect it means nothing', 302, { 'x-should-retry': 'false' }, { kind: 'ok', status: 302 }],
  ])('%s', (_name, status, fields, expected) => {
    expect(readSignals(status, headersOf(fields), NOW)).toEqual(expected)
  })

  it('is found by a get-only source too', () => {
    const source = { get: (name: string) => (name === 'x-should-retry' ? 'false' : null) }
    expect(readSignals(503, source, NOW)).toEqual({ kind: 'overloaded', status: 503, shouldRetry: false })
  })
})
