import { describe, expect, it } from 'vitest'
import type { Signal } from '../../../src/core/types.js'
import { readSignals } from '../../../src/core/signals/read-signals.js'
import { headersOf, NOW, NOW_HTTP_DATE, NOW_SECONDS } from './fixtures.js'

type Fields = Record<string, string | string[]>
type Row = [label: string, status: number, fields: Fields, expected: Signal]

function read(status: number, fields: Fields): Signal {
  return readSignals(status, headersOf(fields), NOW)
}

describe('GitHub x-ratelimit-* (epoch-seconds reset, resource = policy)', () => {
  it.each<Row>([
    [
      'primary limit, plenty left',
      200,
      {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4999',
        'x-ratelimit-used': '1',
        'x-ratelimit-reset': String(NOW_SECONDS + 3600),
        'x-ratelimit-resource': 'core',
      },
      {
        kind: 'ok',
        status: 200,
        remaining: 4999,
        resetAt: NOW + 3_600_000,
        limit: 5000,
        policy: 'core',
        policies: [{ name: 'core', quota: 5000, unit: 'requests' }],
      },
    ],
    [
      'primary limit exhausted: 403 is throttled, retry at reset',
      403,
      {
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-used': '60',
        'x-ratelimit-reset': String(NOW_SECONDS + 1200),
        'x-ratelimit-resource': 'core',
      },
      {
        kind: 'throttled',
        status: 403,
        retryAt: NOW + 1_200_000,
        remaining: 0,
        resetAt: NOW + 1_200_000,
        limit: 60,
        policy: 'core',
        policies: [{ name: 'core', quota: 60, unit: 'requests' }],
      },
    ],
    [
      'secondary limit: 403 with retry-after',
      403,
      {
        'retry-after': '60',
        'x-ratelimit-limit': '30',
        'x-ratelimit-remaining': '12',
        'x-ratelimit-reset': String(NOW_SECONDS + 40),
        'x-ratelimit-resource': 'search',
      },
      {
        kind: 'throttled',
        status: 403,
        retryAt: NOW + 60_000,
        remaining: 12,
        resetAt: NOW + 40_000,
        limit: 30,
        policy: 'search',
        policies: [{ name: 'search', quota: 30, unit: 'requests' }],
      },
    ],
    [
      'server clock 5 min fast: reset read against its Date',
      200,
      {
        date: 'Tue, 23 Sep 2025 12:05:00 GMT',
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '10',
        'x-ratelimit-reset': String(NOW_SECONDS + 300 + 90),
        'x-ratelimit-resource': 'core',
      },
      {
        kind: 'ok',
        status: 200,
        remaining: 10,
        resetAt: NOW + 90_000,
        limit: 5000,
        policy: 'core',
        policies: [{ name: 'core', quota: 5000, unit: 'requests' }],
      },
    ],
    [
      'a plain 403 (permissions) stays ok',
      403,
      { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4990', 'x-ratelimit-reset': String(NOW_SECONDS + 60) },
      {
        kind: 'ok',
        status: 403,
        remaining: 4990,
        resetAt: NOW + 60_000,
        limit: 5000,
        policies: [{ name: 'default', quota: 5000, unit: 'requests' }],
      },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(read(status, fields)).toStrictEqual(expected)
  })
})

describe('Twitter / X x-rate-limit-* (epoch seconds)', () => {
  it.each<Row>([
    [
      'window with room',
      200,
      { 'x-rate-limit-limit': '900', 'x-rate-limit-remaining': '899', 'x-rate-limit-reset': String(NOW_SECONDS + 900) },
      {
        kind: 'ok',
        status: 200,
        remaining: 899,
        resetAt: NOW + 900_000,
        limit: 900,
        policies: [{ name: 'default', quota: 900, unit: 'requests' }],
      },
    ],
    [
      '429 at zero',
      429,
      { 'x-rate-limit-limit': '15', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(NOW_SECONDS + 240) },
      {
        kind: 'throttled',
        status: 429,
        retryAt: NOW + 240_000,
        remaining: 0,
        resetAt: NOW + 240_000,
        limit: 15,
        policies: [{ name: 'default', quota: 15, unit: 'requests' }],
      },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(read(status, fields)).toStrictEqual(expected)
  })
})

describe('Discord X-RateLimit-* (Reset-After delay, Bucket = policy)', () => {
  it.each<Row>([
    [
      'the docs example',
      200,
      {
        'X-RateLimit-Limit': '5',
        'X-RateLimit-Remaining': '1',
        'X-RateLimit-Reset': String(NOW_SECONDS + 1.5),
        'X-RateLimit-Reset-After': '1',
        'X-RateLimit-Bucket': 'abcd1234',
      },
      {
        kind: 'ok',
        status: 200,
        remaining: 1,
        resetAt: NOW + 1000, // Reset-After wins: a delay needs no clock agreement
        limit: 5,
        policy: 'abcd1234',
        policies: [{ name: 'abcd1234', quota: 5, unit: 'requests' }],
      },
    ],
    [
      '429 with fractional Retry-After and Reset-After',
      429,
      {
        'Retry-After': '64.57',
        'X-RateLimit-Limit': '10',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(NOW_SECONDS + 64.57),
        'X-RateLimit-Reset-After': '64.57',
        'X-RateLimit-Bucket': 'abcd1234',
        'X-RateLimit-Scope': 'user',
      },
      {
        kind: 'throttled',
        status: 429,
        retryAt: NOW + 64_570,
        retryResolutionMs: 1,
        remaining: 0,
        resetAt: NOW + 64_570,
        limit: 10,
        policy: 'abcd1234',
        policies: [{ name: 'abcd1234', quota: 10, unit: 'requests' }],
      },
    ],
    [
      'epoch Reset with decimals when Reset-After is missing',
      200,
      { date: NOW_HTTP_DATE, 'X-RateLimit-Remaining': '3', 'X-RateLimit-Reset': String(NOW_SECONDS + 2.25) },
      { kind: 'ok', status: 200, remaining: 3, resetAt: NOW + 2250 },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(read(status, fields)).toStrictEqual(expected)
  })
})

describe('Zalando-style X-RateLimit-Reset (relative seconds) and oddities', () => {
  it.each<Row>([
    [
      'relative seconds',
      200,
      { 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '7', 'X-RateLimit-Reset': '30' },
      {
        kind: 'ok',
        status: 200,
        remaining: 7,
        resetAt: NOW + 30_000,
        limit: 1000,
        policies: [{ name: 'default', quota: 1000, unit: 'requests' }],
      },
    ],
    [
      'epoch milliseconds (Upstash)',
      200,
      { 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': String(NOW + 4500) },
      {
        kind: 'ok',
        status: 200,
        remaining: 2,
        resetAt: NOW + 4500,
        limit: 10,
        policies: [{ name: 'default', quota: 10, unit: 'requests' }],
      },
    ],
    [
      'HTTP-date reset',
      200,
      { 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': 'Tue, 23 Sep 2025 12:00:10 GMT', date: NOW_HTTP_DATE },
      { kind: 'ok', status: 200, remaining: 2, resetAt: NOW + 10_000 },
    ],
    [
      'JavaScript Date.toString() reset is ignored (lemlist)',
      200,
      { 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': 'Tue Feb 16 2021 09:02:42 GMT+0100 (Central European Standard Time)' },
      { kind: 'ok', status: 200, remaining: 2 },
    ],
    [
      'an absurd reset between delay and epoch is ignored',
      200,
      { 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': '500000000' },
      { kind: 'ok', status: 200, remaining: 2 },
    ],
    [
      'negative remaining is ignored',
      200,
      { 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '-3', 'X-RateLimit-Reset': '30' },
      { kind: 'ok', status: 200 },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(read(status, fields)).toStrictEqual(expected)
  })
})
