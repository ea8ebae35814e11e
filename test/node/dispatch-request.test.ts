import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import {
  hasHeader,
  isIdempotent,
  isReplayableBody,
  originScope,
  readResponseSignals,
  ResponseHeaderSource,
} from '../../src/node/dispatch-request.js'

describe('isReplayableBody', () => {
  it('accepts bodies undici can send twice', () => {
    for (const body of [undefined, null, '', 'text', Buffer.from('x'), new Uint8Array(2), new ArrayBuffer(2), new Blob(['x'])]) {
      expect(isReplayableBody(body)).toBe(true)
    }
  })

  it('refuses bodies the first attempt consumes', () => {
    async function* generator() {
      yield 'x'
    }
    for (const body of [Readable.from(['x']), generator(), [Buffer.from('x')][Symbol.iterator](), new FormData()]) {
      expect(isReplayableBody(body)).toBe(false)
    }
  })
})

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
