// Property: whatever a server (or a broken proxy, or a hostile peer) sends,
// readSignals returns a well-formed Signal: it never throws, never yields NaN,
// an infinite or negative delay, or a count below zero.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { HeaderSource } from '../../../src/core/signals/header-source.js'
import { readSignals } from '../../../src/core/signals/read-signals.js'
import { MAX_HORIZON_MS } from '../../../src/core/signals/reset-time.js'
import type { Signal } from '../../../src/core/types.js'
import { NOW } from './fixtures.js'

const RETRY_NAMES = ['retry-after', 'retry-after-ms', 'x-amz-retry-after', 'x-ratelimit-retry-after', 'x-retry-in']
const KNOWN_NAMES = [
  'date',
  'retry-after',
  'retry-after-ms',
  'x-amz-retry-after',
  'x-ratelimit-retry-after',
  'x-retry-in',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-name',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-reset-after',
  'x-ratelimit-resource',
  'x-ratelimit-bucket',
  'x-rate-limit-limit',
  'x-rate-limit-remaining',
  'x-rate-limit-reset',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
  'anthropic-ratelimit-requests-limit',
  'anthropic-ratelimit-requests-remaining',
  'anthropic-ratelimit-requests-reset',
  'anthropic-ratelimit-tokens-remaining',
  'anthropic-ratelimit-output-tokens-reset',
]

const junkName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/)
const headerName = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KNOWN_NAMES) }, { weight: 1, arbitrary: junkName })

const imfDate = fc
  .date({ min: new Date(0), max: new Date(Date.UTC(2200, 0, 1)), noInvalidDate: true })
  .map((date) => date.toUTCString())

const number = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.double({ noNaN: false }).map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }).map((delta) => String(Math.floor(NOW / 1000) + delta)),
  fc.integer({ min: -1_000_000_000_000, max: 1_000_000_000_000 }).map((delta) => String(NOW + delta)),
  fc.constantFrom('Infinity', '-Infinity', 'NaN', '1e309', '-0', '0', '.5', '1.', '00012', '1e3'),
)

const sfItem = fc
  .tuple(
    fc.constantFrom('"default"', '"burst"', 'daily', '100', '-5', '"a\\"b"', ':aGk=:'),
    fc.array(fc.tuple(fc.constantFrom('r', 't', 'q', 'w', 'qu', 'pk'), number), { maxLength: 4 }),
  )
  .map(([value, params]) => value + params.map(([key, param]) => `;${key}=${param}`).join(''))

const headerValue = fc.oneof(
  number,
  imfDate,
  fc.constantFrom(
    'Sunday, 06-Nov-94 08:49:37 GMT',
    'Sun Nov  6 08:49:37 1994',
    '2025-09-23T12:00:01Z',
    '1h2m3.5s',
    '6m0s',
    '-1s',
    '999999999h',
    'limit=100, remaining=0, reset=5',
    'limit=-1, remaining=1e400',
    '',
    ' ',
    ',',
    '"',
    '(((',
  ),
  fc.array(sfItem, { minLength: 1, maxLength: 4 }).map((items) => items.join(', ')),
  fc.string({ maxLength: 40 }),
)

// Mostly plausible values, sometimes junk: the reader's deep paths need both.
const count = fc.oneof({ weight: 3, arbitrary: fc.nat(5000).map(String) }, { weight: 1, arbitrary: number })
const reset = fc.oneof(
  fc.nat(3600).map(String),
  fc.integer({ min: -600, max: 7200 }).map((delta) => String(NOW / 1000 + delta)),
  fc.integer({ min: -600_000, max: 7_200_000 }).map((delta) => String(NOW + delta)),
  number,
)
const duration = fc.oneof(
  fc.tuple(fc.nat(90), fc.constantFrom('ms', 's', 'm', 'h', '', 'x')).map(([amount, unit]) => `${amount}${unit}`),
  headerValue,
)
const rfc3339 = fc.oneof(
  fc.integer({ min: -600_000, max: 7_200_000 }).map((delta) => new Date(NOW + delta).toISOString()),
  headerValue,
)

/** A dialect's headers with plausible-or-junk values, plus some random extra headers. */
const dialect = fc.oneof(
  fc.tuple(count, count, reset, fc.constantFrom('core', 'search', ' ')).map(([limit, remaining, resetAt, resource]) => [
    ['x-ratelimit-limit', limit],
    ['x-ratelimit-remaining', remaining],
    ['x-ratelimit-reset', resetAt],
    ['x-ratelimit-resource', resource],
  ]),
  fc.tuple(count, count, reset).map(([limit, remaining, resetAt]) => [
    ['x-rate-limit-limit', limit],
    ['x-rate-limit-remaining', remaining],
    ['x-rate-limit-reset', resetAt],
  ]),
  fc.tuple(count, count, reset, reset).map(([limit, remaining, resetAt, after]) => [
    ['x-ratelimit-limit', limit],
    ['x-ratelimit-remaining', remaining],
    ['x-ratelimit-reset', resetAt],
    ['x-ratelimit-reset-after', after],
    ['x-ratelimit-bucket', 'abcd1234'],
  ]),
  fc.tuple(count, count, duration, count, duration).map(([requests, left, resetIn, tokens, tokensIn]) => [
    ['x-ratelimit-limit-requests', requests],
    ['x-ratelimit-remaining-requests', left],
    ['x-ratelimit-reset-requests', resetIn],
    ['x-ratelimit-remaining-tokens', tokens],
    ['x-ratelimit-reset-tokens', tokensIn],
  ]),
  fc.tuple(count, count, rfc3339).map(([limit, remaining, resetAt]) => [
    ['anthropic-ratelimit-requests-limit', limit],
    ['anthropic-ratelimit-requests-remaining', remaining],
    ['anthropic-ratelimit-requests-reset', resetAt],
  ]),
  fc.tuple(count, count, reset).map(([limit, remaining, resetAt]) => [
    ['ratelimit', `limit=${limit}, remaining=${remaining}, reset=${resetAt}`],
    ['ratelimit-policy', `${limit};w=60`],
  ]),
  fc.array(sfItem, { minLength: 1, maxLength: 3 }).map((items) => [
    ['ratelimit', items.join(', ')],
    ['ratelimit-policy', items.join(', ')],
  ]),
  fc.tuple(fc.constantFrom(...RETRY_NAMES), fc.oneof(reset, duration, imfDate)).map(([name, value]) => [[name, value]]),
).map((pairs) => pairs as Array<[string, string]>)

const headerPairs = fc
  .tuple(
    fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 }),
    fc.array(dialect, { maxLength: 3 }),
    fc.option(fc.oneof(imfDate, fc.constant('Tue, 23 Sep 2025 12:00:00 GMT'))),
  )
  .map(([random, dialects, date]) => [
    ...random,
    ...dialects.flat(),
    ...(date === null ? [] : ([['date', date]] as Array<[string, string]>)),
  ])

const status = fc.oneof(fc.constantFrom(0, 200, 202, 301, 403, 404, 429, 429, 500, 503), fc.integer({ min: -5, max: 1200 }))
const now = fc.oneof({ weight: 4, arbitrary: fc.constant(NOW) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 4_102_444_800_000 }) })

function headersFrom(pairs: Array<[string, string]>): Headers {
  const headers = new Headers()
  for (const [name, value] of pairs) {
    try {
      headers.append(name, value)
    } catch {
      // Values Headers itself refuses (NUL, CR, LF, non-Latin-1) never reach a real reader.
    }
  }
  return headers
}

/** Every invariant the Signal breaks, as readable strings (empty = well formed). */
function violations(signal: Signal, at: number): string[] {
  const found: string[] = []
  if (!['ok', 'throttled', 'overloaded', 'error'].includes(signal.kind)) found.push(`kind ${signal.kind}`)
  if (!(Number.isInteger(signal.status) && signal.status >= 0)) found.push(`status ${signal.status}`)
  for (const [label, moment] of [['retryAt', signal.retryAt], ['resetAt', signal.resetAt]] as const) {
    if (moment === undefined) continue
    const delayMs = moment - at
    if (!(Number.isFinite(delayMs) && delayMs >= 0 && delayMs <= MAX_HORIZON_MS)) found.push(`${label} delay ${delayMs}`)
  }
  for (const [label, count] of [['remaining', signal.remaining], ['limit', signal.limit]] as const) {
    if (count !== undefined && !(Number.isFinite(count) && count >= 0)) found.push(`${label} ${count}`)
  }
  if (signal.policies !== undefined && signal.policies.length === 0) found.push('empty policies')
  for (const policy of signal.policies ?? []) {
    if (typeof policy.name !== 'string') found.push(`policy name ${String(policy.name)}`)
    if (!(Number.isFinite(policy.quota) && policy.quota >= 0)) found.push(`policy quota ${policy.quota}`)
    if (policy.windowMs !== undefined && !(Number.isFinite(policy.windowMs) && policy.windowMs > 0)) {
      found.push(`policy window ${policy.windowMs}`)
    }
  }
  // No NaN anywhere in the plain data, and no member explicitly set to undefined.
  JSON.stringify(signal, (key, value: unknown) => {
    if (typeof value === 'number' && Number.isNaN(value)) found.push(`NaN at ${key}`)
    return value
  })
  for (const [key, value] of Object.entries(signal)) if (value === undefined) found.push(`undefined ${key}`)
  return found
}

function assertWellFormed(signal: Signal, at: number): void {
  expect(violations(signal, at)).toStrictEqual([])
}

describe('readSignals on arbitrary header sets', () => {
  it('keeps its invariants for 2,000 generated header sets (Headers)', () => {
    let withTimes = 0
    let withCounts = 0
    fc.assert(
      fc.property(status, headerPairs, now, (code, pairs, at) => {
        const signal = readSignals(code, headersFrom(pairs), at)
        assertWellFormed(signal, at)
        if (signal.retryAt !== undefined || signal.resetAt !== undefined) withTimes++
        if (signal.remaining !== undefined) withCounts++
      }),
      { numRuns: 2000 },
    )
    // The generator must reach the interesting paths, or the property proves little.
    expect(withTimes).toBeGreaterThan(200)
    expect(withCounts).toBeGreaterThan(400)
  })

  it('keeps its invariants for 1,000 raw sources with unicode and control characters', () => {
    const rawValue = fc.oneof(headerValue, fc.string({ unit: 'grapheme', maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }))
    fc.assert(
      fc.property(status, fc.dictionary(headerName, rawValue, { maxKeys: 12 }), now, (code, record, at) => {
        const source: HeaderSource = { get: (name) => (Object.hasOwn(record, name) ? (record[name] ?? null) : null) }
        assertWellFormed(readSignals(code, source, at), at)
      }),
      { numRuns: 1000 },
    )
  })

  it('never throws for a non-finite or negative client clock', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 }),
        fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1),
        (pairs, at) => {
          const signal = readSignals(429, headersFrom(pairs), at)
          expect(signal.kind).toBe('throttled')
          if (!Number.isFinite(at)) {
            expect(signal.retryAt).toBeUndefined()
            expect(signal.resetAt).toBeUndefined()
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
