import { util as undiciUtil } from 'undici'
import { describe, expect, it } from 'vitest'
import {
  hasHeader,
  isIdempotent,
  originScope,
  parseRawHeaders,
  readRawResponseSignals,
  readRawResponseSignalsAt,
  readResponseSignals,
  ResponseHeaderSource,
} from '../../src/node/dispatch-request.js'

describe('isIdempotent / hasHeader', () => {
  it('follows RFC 9110 for methods', () => {
    for (const method of ['GET', 'head', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']) expect(isIdempotent(method, null)).toBe(true)
    for (const method of ['POST', 'PATCH', 'CONNECT']) expect(isIdempotent(method, null)).toBe(false)
  })

  it('finds an Idempotency-Key in every header form undici accepts', () => {
    expect(isIdempotent('POST', { 'Idempotency-Key': 'a' })).toBe(true)
    expect(isIdempotent('POST', ['content-type', 'x', 'idempotency-key', 'a'])).toBe(true)
    expect(isIdempotent('POST', new Map([['IDEMPOTENCY-KEY', 'a']]) as never)).toBe(true)
    expect(hasHeader({ 'idempotency-key': undefined }, 'idempotency-key')).toBe(false)
    expect(hasHeader(['idempotency-key-ish', 'x'], 'idempotency-key')).toBe(false)
  })
})

describe('originScope', () => {
  it('normalises the origin spelling', () => {
    expect(originScope('http://API.example.com:80/')).toBe('http://api.example.com')
    expect(originScope(new URL('https://example.com:8443/path'))).toBe('https://example.com:8443')
    expect(originScope('not a url')).toBe('not a url')
    expect(originScope(undefined)).toBe('')
  })

  it('answers a repeated origin from the last one, and a different one afresh', () => {
    // Built at run time, as undici's `url.origin` is: equal strings, not the same object.
    const port = 8000 + Math.floor(Math.random() * 1000)
    const origin = (host: string): string => `${'http'}://${host}:${port}`
    expect(originScope(origin('a.example'))).toBe(`http://a.example:${port}`)
    expect(originScope(origin('a.example'))).toBe(`http://a.example:${port}`)
    expect(originScope(origin('B.example'))).toBe(`http://b.example:${port}`)
    expect(originScope(origin('a.example'))).toBe(`http://a.example:${port}`)
    expect(originScope('not a url')).toBe('not a url')
    expect(originScope('not a url')).toBe('not a url')
    expect(originScope(origin('B.example'))).toBe(`http://b.example:${port}`)
  })
})

describe('readResponseSignals', () => {
  it('reads rate-limit fields from undici’s header record', () => {
    const now = 1_700_000_000_000
    expect(readResponseSignals(429, { 'retry-after': '2', 'content-type': 'text/plain' }, now)).toMatchObject({
      kind: 'throttled',
      status: 429,
      retryAt: now + 2000,
    })
  })

  it('answers from the status alone when no rate-limit field is present, without allocating', () => {
    const first = readResponseSignals(200, { 'content-type': 'application/json' }, 1)
    const second = readResponseSignals(200, {}, 2)
    expect(first).toEqual({ kind: 'ok', status: 200 })
    expect(second).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    expect(readResponseSignals(503, {}, 1)).toEqual({ kind: 'overloaded', status: 503 })
  })

  it('joins repeated header values as one field', () => {
    expect(new ResponseHeaderSource({ 'x-a': ['1', '2'] }).get('x-a')).toBe('1, 2')
    expect(new ResponseHeaderSource({}).get('x-a')).toBeNull()
  })
})

describe('raw headers (undici’s callback handler API)', () => {
  const raw = (...pairs: string[]): Buffer[] => pairs.map((item) => Buffer.from(item, 'latin1'))

  it('parses them into the lower-cased record of the controller API, repeats as arrays', () => {
    expect(parseRawHeaders(raw('Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'set-cookie', 'b=2', 'X-Three', '3', 'x-three', '4', 'X-THREE', '5'))).toEqual({
      'content-type': 'text/plain',
      'set-cookie': ['a=1', 'b=2'],
      'x-three': ['3', '4', '5'],
    })
    expect(parseRawHeaders(['X-S', 'v', 'x-arr', [Buffer.from('1'), '2']])).toEqual({ 'x-s': 'v', 'x-arr': ['1', '2'] })
    expect(parseRawHeaders(null)).toEqual({})
  })

  it('parses exactly as undici does for a controller-API handler: names of Object.prototype, __proto__, latin1 bytes', () => {
    // What undici itself hands onResponseStart (UnwrapHandler: util.parseHeaders). Before: a
    // `Constructor` field came out as [Object, 'yes'], `__proto__` was dropped, and bytes
    // above 0x7f were read as UTF-8 (`é` sent as UTF-8 became `é`, not undici's `Ã©`).
    const cases = [
      raw('Constructor', 'yes', 'toString', 'no', 'hasOwnProperty', 'x', 'valueOf', '1', 'valueOf', '2'),
      raw('__proto__', 'polluted', 'x-a', '1'),
      [Buffer.from('Content-Disposition'), Buffer.from('attachment; filename="café.txt"', 'utf8'), Buffer.from('X-Latin'), Buffer.from([0xe9])],
    ]
    for (const headers of cases) {
      const ours = parseRawHeaders(headers)
      expect(ours).toEqual(undiciUtil.parseHeaders(headers))
      expect(Object.getPrototypeOf(ours)).toBe(Object.prototype)
    }
  })

  it('reads rate-limit fields whatever their case', () => {
    const now = 1_700_000_000_000
    expect(readRawResponseSignals(429, raw('Content-Type', 'text/plain', 'Retry-After', '2'), now)).toMatchObject({
      kind: 'throttled',
      retryAt: now + 2000,
    })
    expect(readRawResponseSignals(200, raw('X-RateLimit-Remaining', '0', 'X-RateLimit-Reset', '30'), now)).toMatchObject({
      kind: 'ok',
      remaining: 0,
    })
    expect(readRawResponseSignals(429, ['retry-after-ms', '1500'], now)).toMatchObject({ retryAt: now + 1500 })
  })

  it('answers from the status alone (the shared frozen signal) when no name could be a rate-limit field', () => {
    // Same length and first letter as a signal name, but not one: still read correctly.
    const lookalike = raw('retry-aftex', '9', 'Content-Length', '2', 'Date', 'Sat, 29 Nov 2026 16:00:00 GMT')
    const signal = readRawResponseSignals(200, lookalike, 1)
    expect(signal).toEqual({ kind: 'ok', status: 200 })
    expect(signal).toBe(readResponseSignals(200, {}, 2))
    expect(readRawResponseSignals(503, null, 1)).toEqual({ kind: 'overloaded', status: 503 })
  })

  it('reads the clock only when a rate-limit field is there, and keeps each status its own signal', () => {
    let reads = 0
    const now = (): number => {
      reads++
      return 1_700_000_000_000
    }
    const plain = raw('Content-Type', 'application/json', 'Content-Length', '11', 'Date', 'Sat, 29 Nov 2026 16:00:00 GMT')
    expect(readRawResponseSignalsAt(200, plain, now)).toEqual({ kind: 'ok', status: 200 })
    expect(readRawResponseSignalsAt(429, plain, now)).toEqual({ kind: 'throttled', status: 429 })
    expect(readRawResponseSignalsAt(200, plain, now)).toEqual({ kind: 'ok', status: 200 })
    expect(readRawResponseSignalsAt(503, null, now)).toEqual({ kind: 'overloaded', status: 503 })
    expect(reads).toBe(0)
    expect(readRawResponseSignalsAt(429, raw('Retry-After', '2'), now)).toMatchObject({ kind: 'throttled', retryAt: 1_700_000_002_000 })
    expect(reads).toBe(1)
  })

  it('finds rate-limit names given as strings in any case, and skips other names', () => {
    expect(readRawResponseSignalsAt(429, ['RETRY-AFTER', '3'], 1_000)).toMatchObject({ retryAt: 4_000 })
    expect(readRawResponseSignalsAt(429, ['x-retry-after-not-a-signal', '3'], 1_000)).toEqual({ kind: 'throttled', status: 429 })
  })
})
