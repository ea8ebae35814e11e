import { describe, expect, it } from 'vitest'
import type { Signal } from '../../../src/core/types.js'
import { readSignals } from '../../../src/core/signals/read-signals.js'
import { headersOf, NOW, NOW_HTTP_DATE } from './fixtures.js'

type Fields = Record<string, string | string[]>
type Row = [label: string, status: number, fields: Fields, expected: Signal]

function read(status: number, fields: Fields): Signal {
  return readSignals(status, headersOf(fields), NOW)
}

const OPENAI_OK: Fields = {
  'x-ratelimit-limit-requests': '60',
  'x-ratelimit-limit-tokens': '150000',
  'x-ratelimit-remaining-requests': '59',
  'x-ratelimit-remaining-tokens': '149984',
  'x-ratelimit-reset-requests': '1s',
  'x-ratelimit-reset-tokens': '6m0s',
}
const OPENAI_POLICIES = [
  { name: 'requests', quota: 60, unit: 'requests' },
  { name: 'tokens', quota: 150_000, unit: 'tokens' },
]

describe('OpenAI x-ratelimit-*-{requests,tokens} (duration resets)', () => {
  it.each<Row>([
    [
      'the docs example: requests pace, tokens are reported',
      200,
      OPENAI_OK,
      { kind: 'ok', status: 200, remaining: 59, resetAt: NOW + 1000, limit: 60, policies: OPENAI_POLICIES },
    ],
    [
      'tokens exhausted does not pace attempts; retry-after-ms does',
      429,
      {
        ...OPENAI_OK,
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': '1h2m3.5s',
        'retry-after-ms': '20',
        'retry-after': '1',
      },
      { kind: 'throttled', status: 429, retryAt: NOW + 20, retryResolutionMs: 1, remaining: 59, resetAt: NOW + 1000, limit: 60, policies: OPENAI_POLICIES },
    ],
    [
      'requests exhausted, ms reset',
      429,
      { ...OPENAI_OK, 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20ms' },
      { kind: 'throttled', status: 429, retryAt: NOW + 20, remaining: 0, resetAt: NOW + 20, limit: 60, policies: OPENAI_POLICIES },
    ],
    [
      'malformed duration: reset unknown',
      200,
      { ...OPENAI_OK, 'x-ratelimit-reset-requests': 'soon' },
      { kind: 'ok', status: 200, remaining: 59, limit: 60, policies: OPENAI_POLICIES },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(read(status, fields)).toStrictEqual(expected)
  })
})

const ANTHROPIC_OK: Fields = {
  'anthropic-ratelimit-requests-limit': '50',
  'anthropic-ratelimit-requests-remaining': '49',
  'anthropic-ratelimit-requests-reset': '2025-09-23T12:00:01Z',
  'anthropic-ratelimit-tokens-limit': '80000',
  'anthropic-ratelimit-tokens-remaining': '79000',
  'anthropic-ratelimit-tokens-reset': '2025-09-23T12:00:05Z',
  'anthropic-ratelimit-input-tokens-limit': '40000',
  'anthropic-ratelimit-input-tokens-remaining': '39500',
  'anthropic-ratelimit-input-tokens-reset': '2025-09-23T12:00:03Z',
  'anthropic-ratelimit-output-tokens-limit': '8000',
  'anthropic-ratelimit-output-tokens-remaining': '7500',
  'anthropic-ratelimit-output-tokens-reset': '2025-09-23T12:00:02Z',
}
const ANTHROPIC_POLICIES = [
  { name: 'requests', quota: 50, unit: 'requests' },
  { name: 'tokens', quota: 80_000, unit: 'tokens' },
  { name: 'input-tokens', quota: 40_000, unit: 'tokens' },
  { name: 'output-tokens', quota: 8000, unit: 'tokens' },
]

describe('Anthropic anthropic-ratelimit-* (RFC 3339 resets)', () => {
  it.each<Row>([
    [
      'all four quotas announced',
      200,
      ANTHROPIC_OK,
      { kind: 'ok', status: 200, remaining: 49, resetAt: NOW + 1000, limit: 50, policies: ANTHROPIC_POLICIES },
    ],
    [
      'server clock 30 s slow: timestamps read against its Date',
      200,
      {
        ...ANTHROPIC_OK,
        date: 'Tue, 23 Sep 2025 11:59:30 GMT',
        'anthropic-ratelimit-requests-reset': '2025-09-23T11:59:40Z',
      },
      { kind: 'ok', status: 200, remaining: 49, resetAt: NOW + 10_000, limit: 50, policies: ANTHROPIC_POLICIES },
    ],
    [
      '429 with retry-after',
      429,
      { ...ANTHROPIC_OK, 'anthropic-ratelimit-requests-remaining': '0', 'retry-after': '7', date: NOW_HTTP_DATE },
      { kind: 'throttled', status: 429, retryAt: NOW + 7000, remaining: 0, resetAt: NOW + 1000, limit: 50, policies: ANTHROPIC_POLICIES },
    ],
    [
      'offset timestamp and a past reset (clamped to now)',
      200,
      { ...ANTHROPIC_OK, 'anthropic-ratelimit-requests-reset': '2025-09-23T13:59:00+02:00' },
      { kind: 'ok', status: 200, remaining: 49, resetAt: NOW, limit: 50, policies: ANTHROPIC_POLICIES },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(read(status, fields)).toStrictEqual(expected)
  })
})
