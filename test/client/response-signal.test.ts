import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PACED_HEADER, PACED_HEADER_VALUE, responseSignal } from '../../src/client/response-signal.js'
import { readSignals } from '../../src/core/signals/index.js'

const NOW = Date.UTC(2026, 0, 1)
const DATE = new Date(NOW).toUTCString()

describe('responseSignal', () => {
  it('reads what readSignals reads from the same Headers', () => {
    const cases: Array<[number, Record<string, string>]> = [
      [200, { 'content-type': 'application/json', date: DATE }],
      [200, { ratelimit: '"default";r=5;t=30', 'ratelimit-policy': '"default";q=100;w=60', date: DATE }],
      [200, { 'X-RateLimit-Remaining': '7', 'X-RateLimit-Limit': '10', 'X-RateLimit-Reset': '20' }],
      [200, { 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': '5' }],
      [429, { 'retry-after': '3', date: DATE }],
      [429, {}],
      [503, { 'Retry-After': new Date(NOW + 5_000).toUTCString(), Date: DATE }],
      [403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '9' }],
      [200, { 'anthropic-ratelimit-requests-remaining': '3', 'anthropic-ratelimit-requests-reset': new Date(NOW + 9_000).toISOString() }],
      [202, { 'retry-after': '10' }],
    ]
    for (const [status, fields] of cases) {
      const headers = new Headers(fields)
      expect(responseSignal(status, headers, NOW), JSON.stringify(fields)).toEqual(readSignals(status, headers, NOW))
    }
  })

  it('hands quota hints on a 200 to the pacer', () => {
    const signal = responseSignal(200, new Headers({ 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '20' }), NOW)
    expect(signal).toMatchObject({ kind: 'ok', status: 200, remaining: 7 })
  })

  it('returns undefined for a response our service worker already paced, whatever else it says', () => {
    expect(responseSignal(429, new Headers({ [PACED_HEADER]: PACED_HEADER_VALUE, 'retry-after': '1' }), NOW)).toBeUndefined()
    expect(responseSignal(200, new Headers({ 'X-Polite-Fetch': PACED_HEADER_VALUE }), NOW)).toBeUndefined()
    expect(responseSignal(200, new Headers({ [PACED_HEADER]: 'something-else' }), NOW)).toEqual({ kind: 'ok', status: 200 })
  })

  it('reads a headers object without keys() (or whose keys() throws) the plain way', () => {
    const fields = new Map([
      ['retry-after', '2'],
      ['date', DATE],
    ])
    const getOnly = { get: (name: string) => fields.get(name) ?? null }
    expect(responseSignal(429, getOnly, NOW)).toEqual(readSignals(429, getOnly, NOW))
    expect(responseSignal(429, getOnly, NOW)).toMatchObject({ kind: 'throttled', retryAt: NOW + 2_000 })
    const broken = {
      get: getOnly.get,
      keys(): Iterable<unknown> {
        throw new Error('no listing')
      },
    }
    expect(responseSignal(429, broken, NOW)).toEqual(readSignals(429, getOnly, NOW))
    const paced = { get: (name: string) => (name === PACED_HEADER ? PACED_HEADER_VALUE : null) }
    expect(responseSignal(200, paced, NOW)).toBeUndefined()
  })

  it('agrees with readSignals on any mix of fields', () => {
    const names = [
      'content-type', 'Date', 'retry-after', 'retry-after-ms', 'x-amz-retry-after', 'ratelimit', 'RateLimit-Policy',
      'ratelimit-remaining', 'ratelimit-reset', 'x-ratelimit-remaining', 'X-RateLimit-Reset', 'x-ratelimit-limit',
      'x-rate-limit-remaining', 'x-ratelimit-bucket', 'x-retry-in', 'anthropic-ratelimit-requests-remaining', 'server', 'age',
    ]
    const values = ['0', '1', '30', '1.5', '-1', 'abc', DATE, '"default";r=0;t=10', '"p";q=10;w=1', '']
    fc.assert(
      fc.property(
        fc.constantFrom(200, 201, 403, 429, 500, 503),
        fc.dictionary(fc.constantFrom(...names), fc.constantFrom(...values), { maxKeys: 6 }),
        (status, fields) => {
          const headers = new Headers(fields)
          expect(responseSignal(status, headers, NOW)).toEqual(readSignals(status, headers, NOW))
        },
      ),
    )
  })
})
