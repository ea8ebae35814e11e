import { describe, expect, it } from 'vitest'
import type { HeaderSource } from '../../../src/core/signals/header-source.js'
import { readSignals, SIGNAL_HEADER_NAMES } from '../../../src/core/signals/read-signals.js'
import type { SignalKind } from '../../../src/core/types.js'
import { headersOf, NOW } from './fixtures.js'

type Fields = Record<string, string | string[]>

describe('classification', () => {
  it.each<[string, number, Fields, SignalKind]>([
    ['no response', 0, {}, 'error'],
    ['200', 200, {}, 'ok'],
    ['404 says nothing about the quota', 404, {}, 'ok'],
    ['500', 500, {}, 'ok'],
    ['429 without headers', 429, {}, 'throttled'],
    ['503 without headers', 503, {}, 'overloaded'],
    ['529 (Anthropic overloaded_error)', 529, {}, 'overloaded'],
    ['529 with a Retry-After', 529, { 'retry-after': '3' }, 'overloaded'],
    ['403 without rate-limit evidence', 403, { 'x-ratelimit-remaining': '10' }, 'ok'],
    ['403 with remaining 0', 403, { 'x-ratelimit-remaining': '0' }, 'throttled'],
    ['403 with Retry-After (GitHub secondary)', 403, { 'retry-after': '60' }, 'throttled'],
    ['403 with a malformed Retry-After', 403, { 'retry-after': 'later' }, 'ok'],
    ['403 with tokens (not requests) at 0', 403, { 'x-ratelimit-remaining-tokens': '0' }, 'ok'],
    ['not an HTTP status', Number.NaN, { 'retry-after': '5' }, 'error'],
    ['fractional status', 429.5, {}, 'error'],
  ])('%s → %s', (_label, status, fields, kind) => {
    expect(readSignals(status, headersOf(fields), NOW).kind).toBe(kind)
  })

  it('reports status 0 for anything that is not an HTTP status', () => {
    expect(readSignals(-1, headersOf({}), NOW)).toStrictEqual({ kind: 'error', status: 0 })
  })
})

describe('retryAt', () => {
  it.each<[string, number, Fields, number | undefined]>([
    ['503 with Retry-After', 503, { 'retry-after': '30' }, NOW + 30_000],
    ['202 with Retry-After (a polling hint) does not gate the lane', 202, { 'retry-after': '30' }, undefined],
    ['301 with Retry-After does not gate the lane', 301, { 'retry-after': '30' }, undefined],
    ['429 exhausted without retry header: reset', 429, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '12' }, NOW + 12_000],
    ['429 with remaining left: no retry time invented', 429, { 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '12' }, undefined],
    ['503 exhausted without retry header: no retry time invented', 503, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '12' }, undefined],
  ])('%s', (_label, status, fields, expected) => {
    expect(readSignals(status, headersOf(fields), NOW).retryAt).toBe(expected)
  })
})

describe('the most restrictive limit across dialects', () => {
  it('chooses the smallest remaining and keeps every policy once', () => {
    const signal = readSignals(
      200,
      headersOf({
        // express-rate-limit with both standard and legacy headers: the same limit twice.
        'RateLimit-Limit': '100',
        'RateLimit-Remaining': '40',
        'RateLimit-Reset': '20',
        'X-RateLimit-Limit': '100',
        'X-RateLimit-Remaining': '40',
        'X-RateLimit-Reset': '20',
        RateLimit: '"hourly";r=7;t=1800',
        'RateLimit-Policy': '"hourly";q=500;w=3600',
      }),
      NOW,
    )
    expect(signal).toStrictEqual({
      kind: 'ok',
      status: 200,
      remaining: 7,
      resetAt: NOW + 1_800_000,
      limit: 500,
      policy: 'hourly',
      policies: [
        { name: 'hourly', quota: 500, windowMs: 3_600_000, unit: 'requests' },
        { name: 'default', quota: 100, unit: 'requests' },
      ],
    })
  })
})

/** A get-only HeaderSource over a record, counting its calls. */
function countingSource(fields: Record<string, string>): HeaderSource & { calls: number } {
  const source = {
    calls: 0,
    get(name: string): string | null {
      source.calls++
      return fields[name] ?? null
    },
  }
  return source
}

describe('fast path', () => {
  it('answers a response without rate-limit headers with the bare status', () => {
    const headers = headersOf({ 'content-type': 'application/json', date: 'Tue, 23 Sep 2025 12:00:00 GMT' })
    expect(readSignals(200, headers, NOW)).toStrictEqual({ kind: 'ok', status: 200 })
    expect(readSignals(429, headers, NOW)).toStrictEqual({ kind: 'throttled', status: 429 })
  })

  it('does not look at headers at all when there was no response', () => {
    const source = countingSource({ 'retry-after': '5' })
    expect(readSignals(0, source, NOW)).toStrictEqual({ kind: 'error', status: 0 })
    expect(source.calls).toBe(0)
  })

  it.each(SIGNAL_HEADER_NAMES)('leaves the fast path when %s is present', (name) => {
    const source = countingSource({ [name]: '1' })
    readSignals(429, source, NOW)
    // The probe stops at the first name present; anything beyond that is the full read.
    expect(source.calls).toBeGreaterThan(SIGNAL_HEADER_NAMES.indexOf(name) + 1)
  })
})

describe('hostile or sloppy header sources', () => {
  it('survives a get() that throws', () => {
    const throwing: HeaderSource = {
      get(name) {
        if (name === 'ratelimit') throw new Error('boom')
        return name === 'retry-after' ? '5' : null
      },
    }
    expect(readSignals(429, throwing, NOW)).toStrictEqual({ kind: 'throttled', status: 429 })
  })

  it('survives a forEach that throws', () => {
    const throwing = {
      forEach() {
        throw new Error('boom')
      },
      get: () => '5',
    }
    expect(readSignals(503, throwing, NOW)).toStrictEqual({ kind: 'overloaded', status: 503 })
  })

  it('ignores values that are not strings', () => {
    const sloppy = { get: (name: string) => (name === 'retry-after' ? 12 : undefined) } as unknown as HeaderSource
    expect(readSignals(429, sloppy, NOW)).toStrictEqual({ kind: 'throttled', status: 429 })
  })

  it('ignores over-long fields', () => {
    const signal = readSignals(429, headersOf({ 'retry-after': `${'0'.repeat(5000)}5` }), NOW)
    expect(signal).toStrictEqual({ kind: 'throttled', status: 429 })
  })

  it('yields no times when the client clock is not finite, but still the counts', () => {
    const signal = readSignals(429, headersOf({ 'retry-after': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '9' }), Number.NaN)
    expect(signal).toStrictEqual({ kind: 'throttled', status: 429, remaining: 0 })
  })
})
