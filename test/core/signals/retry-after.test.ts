import { describe, expect, it } from 'vitest'
import { readSignals } from '../../../src/core/signals/read-signals.js'
import { headersOf, NOW, NOW_HTTP_DATE } from './fixtures.js'

type Fields = Record<string, string | string[]>

function retryAtOf(fields: Fields, status = 429): number | undefined {
  return readSignals(status, headersOf(fields), NOW).retryAt
}

describe('Retry-After (RFC 9110 §10.2.3)', () => {
  it.each<[string, Fields, number | undefined]>([
    ['delay-seconds', { 'retry-after': '120' }, NOW + 120_000],
    ['zero', { 'retry-after': '0' }, NOW],
    ['fractional seconds (AWS, Stainless)', { 'retry-after': '1.5' }, NOW + 1500],
    ['IMF-fixdate, agreeing clocks', { 'retry-after': 'Tue, 23 Sep 2025 12:01:00 GMT', date: NOW_HTTP_DATE }, NOW + 60_000],
    ['RFC 850 date', { 'retry-after': 'Tuesday, 23-Sep-25 12:01:00 GMT', date: NOW_HTTP_DATE }, NOW + 60_000],
    ['asctime date', { 'retry-after': 'Tue Sep 23 12:01:00 2025', date: NOW_HTTP_DATE }, NOW + 60_000],
    // Server clock 1 h behind ours: the date means "60 s after my Date", not "now - 59 min".
    ['date through a skewed server Date', { 'retry-after': 'Tue, 23 Sep 2025 11:01:00 GMT', date: 'Tue, 23 Sep 2025 11:00:00 GMT' }, NOW + 60_000],
    ['date without a Date header: our clock', { 'retry-after': 'Tue, 23 Sep 2025 12:00:30 GMT' }, NOW + 30_000],
    ['date in the past clamps to now', { 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' }, NOW],
    ['duplicated field reads the first member', { 'retry-after': ['30', '30'] }, NOW + 30_000],
    ['duplicated IMF-fixdate', { 'retry-after': ['Tue, 23 Sep 2025 12:01:00 GMT', 'Tue, 23 Sep 2025 12:01:00 GMT'] }, NOW + 60_000],
    ['negative: malformed', { 'retry-after': '-5' }, undefined],
    ['junk', { 'retry-after': 'soon' }, undefined],
    ['exponent', { 'retry-after': '1e3' }, undefined],
    ['absurd delay (an epoch sent as a delay)', { 'retry-after': '1792152901' }, undefined],
    ['date over a year ahead', { 'retry-after': 'Fri, 01 Jan 2100 00:00:00 GMT' }, undefined],
  ])('%s', (_label, fields, expected) => {
    expect(retryAtOf(fields)).toBe(expected)
  })
})

describe('the other retry headers', () => {
  it.each<[string, Fields, number | undefined]>([
    ['retry-after-ms (OpenAI)', { 'retry-after-ms': '250' }, NOW + 250],
    ['retry-after-ms with a fraction', { 'retry-after-ms': '12.5' }, NOW + 12.5],
    ['x-amz-retry-after (ms)', { 'x-amz-retry-after': '1500' }, NOW + 1500],
    ['X-RateLimit-Retry-After seconds (Symfony)', { 'X-RateLimit-Retry-After': '42' }, NOW + 42_000],
    ['X-RateLimit-Retry-After as an epoch', { 'X-RateLimit-Retry-After': String(NOW / 1000 + 42) }, NOW + 42_000],
    ['X-Retry-In Go duration (Traefik/oxy)', { 'X-Retry-In': '30s' }, NOW + 30_000],
    ['X-Retry-In compound', { 'X-Retry-In': '1m30s' }, NOW + 90_000],
    ['X-Retry-In junk', { 'X-Retry-In': 'later' }, undefined],
    ['retry-after-ms negative', { 'retry-after-ms': '-1' }, undefined],
  ])('%s', (_label, fields, expected) => {
    expect(retryAtOf(fields)).toBe(expected)
  })
})

describe('precedence among retry headers', () => {
  it.each<[string, Fields, number]>([
    ['retry-after-ms beats the rounded-up Retry-After', { 'retry-after-ms': '1234', 'retry-after': '2' }, NOW + 1234],
    ['x-amz-retry-after beats Retry-After', { 'x-amz-retry-after': '700', 'retry-after': '5' }, NOW + 700],
    ['Retry-After beats X-RateLimit-Retry-After', { 'retry-after': '5', 'x-ratelimit-retry-after': '9' }, NOW + 5000],
    ['a malformed retry-after-ms falls through', { 'retry-after-ms': 'abc', 'retry-after': '3' }, NOW + 3000],
    ['a malformed Retry-After falls through', { 'retry-after': 'soon', 'x-retry-in': '4s' }, NOW + 4000],
    [
      'Retry-After takes precedence over the RateLimit t (IETF)',
      { 'retry-after': '90', ratelimit: '"default";r=0;t=30', 'ratelimit-policy': '"default";q=100;w=60' },
      NOW + 90_000,
    ],
  ])('%s', (_label, fields, expected) => {
    expect(retryAtOf(fields)).toBe(expected)
  })
})

describe('the resolution a retry time was given in', () => {
  // Whole seconds cannot tell a step under a second away from one unit's refill: a pacer that
  // knows the quota's rate reads a finer Retry-After at its own resolution (atb-adaptive.ts).
  it.each<[string, Fields, number | undefined]>([
    ['Retry-After in whole seconds: none said', { 'retry-after': '2' }, undefined],
    ['retry-after-ms beside a rounded Retry-After (OpenAI, Anthropic)', { 'retry-after': '1', 'retry-after-ms': '600' }, 1],
    ['x-amz-retry-after', { 'x-amz-retry-after': '1500' }, 1],
    ['a fractional Retry-After', { 'retry-after': '0.6' }, 1],
    ['an HTTP-date: whole seconds', { 'retry-after': 'Tue, 23 Sep 2025 12:01:00 GMT', date: NOW_HTTP_DATE }, undefined],
    ['a malformed retry-after-ms falls through to whole seconds', { 'retry-after-ms': 'soon', 'retry-after': '2' }, undefined],
  ])('%s', (_label, fields, expected) => {
    expect(readSignals(429, headersOf(fields), NOW).retryResolutionMs).toBe(expected)
  })

  it('is not said where no retry time is: a success, or a RateLimit reset standing in for one', () => {
    expect(readSignals(200, headersOf({ 'retry-after-ms': '600' }), NOW).retryResolutionMs).toBeUndefined()
    const fromReset = readSignals(429, headersOf({ 'RateLimit-Policy': '"d";q=10;w=60', RateLimit: '"d";r=0;t=5' }), NOW)
    expect(fromReset.retryAt).toBe(NOW + 5000)
    expect(fromReset.retryResolutionMs).toBeUndefined()
  })
})
