// What the interceptor needs to know about one undici dispatch before sending it:
// is a network failure safe to retry, which lane it belongs to (whether its body can
// be sent twice: replayable-body.ts). Plain functions over undici's `DispatchOptions`.
import { util as undiciUtil, type Dispatcher } from 'undici'
import { OriginCache } from '../client/origin-cache.js'
import { readSignals, SIGNAL_HEADER_NAMES, statusSignal, type HeaderSource } from '../core/signals/index.js'
import type { Signal } from '../core/types.js'

type UndiciHeaders = Dispatcher.DispatchOptions['headers']
type ResponseHeaders = Record<string, string | string[] | undefined>

// RFC 9110 §9.2.2, plus QUERY (httpbis draft), which undici also treats as idempotent.
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE', 'QUERY'])

/** A failure without a response may be retried only for these (or with an `Idempotency-Key`). */
export function isIdempotent(method: string, headers: UndiciHeaders): boolean {
  return idempotentMethods.has(method.toUpperCase()) || hasHeader(headers, 'idempotency-key')
}

/** Whether `name` (lower case) is among the request headers, in any form undici accepts. */
export function hasHeader(headers: UndiciHeaders, name: string): boolean {
  if (headers == null) return false
  if (Array.isArray(headers)) {
    // Flat [name, value, name, value, …] form.
    for (let i = 0; i < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === name) return true
    }
    return false
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const entry of headers as Iterable<unknown>) {
      if (Array.isArray(entry) && String(entry[0]).toLowerCase() === name) return true
    }
    return false
  }
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name && (headers as ResponseHeaders)[key] !== undefined) return true
  }
  return false
}

// Origins repeat endlessly: the fetch shell's cache (scheme://authority → origin, with a
// last-hit check) serves the dispatcher's `opts.origin` strings too.
const origins = new OriginCache()

// The origin a dispatch names is almost always the one the previous dispatch named
// (undici's `request` and `fetch` pass `url.origin`, already normalised): one string
// compare answers it, before the cache's own scan of the scheme and authority.
let lastOrigin: string | undefined
let lastScope = ''

/** The default lane key: the request's origin (`http://host:port`), normalised. */
export function originScope(origin: Dispatcher.DispatchOptions['origin']): string {
  if (origin == null) return ''
  if (typeof origin !== 'string') return origin.origin
  if (origin === lastOrigin) return lastScope
  const scope = parsedOrigin(origin)
  lastOrigin = origin
  lastScope = scope
  return scope
}

function parsedOrigin(origin: string): string {
  const cached = origins.originOf(origin)
  if (typeof cached === 'string') return cached
  // null: the cache already tried the parse and it failed; do not fail it again per request.
  if (cached === null) return origin
  try {
    return new URL(origin).origin
  } catch {
    return origin
  }
}

/** `readSignals` reads headers through `get`; undici hands the interceptor a plain lower-cased record. */
export class ResponseHeaderSource implements HeaderSource {
  readonly #headers: ResponseHeaders

  constructor(headers: ResponseHeaders) {
    this.#headers = headers
  }

  get(name: string): string | null {
    const value = this.#headers[name]
    if (value === undefined) return null
    return Array.isArray(value) ? value.join(', ') : value
  }
}

const signalHeaderNames = new Set(SIGNAL_HEADER_NAMES)

/**
 * `readSignals` for undici's header record. Most responses carry no rate-limit field at
 * all: one pass over their few header names settles that, and the status alone decides
 * (a cached, frozen Signal: nothing allocated per healthy response).
 */
export function readResponseSignals(status: number, headers: ResponseHeaders, now: number): Signal {
  for (const name in headers) {
    if (signalHeaderNames.has(name)) return readSignals(status, new ResponseHeaderSource(headers), now)
  }
  return statusSignal(status, now)
}

/** undici's legacy handlers see raw headers: `[name, value, name, value, …]`, Buffers (or strings). */
export type RawHeaders = ReadonlyArray<Buffer | string | ReadonlyArray<Buffer | string>>

/**
 * Raw headers as the lower-cased record undici's newer handler API uses (repeats become arrays):
 * undici's own parser, so a controller-API handler gets exactly what undici would hand it (values
 * read as latin1; names such as `constructor` or `__proto__` kept as own fields).
 */
export function parseRawHeaders(raw: RawHeaders | null | undefined): ResponseHeaders {
  if (raw == null) return {}
  return undiciUtil.parseHeaders(raw as (Buffer | string | (Buffer | string)[])[]) as ResponseHeaders
}

// First letters and lengths of the names `readSignals` understands, as lookup tables: a
// raw name that matches neither is skipped without being turned into a string (a table
// read costs next to nothing; a Set lookup per header was a measurable share of a request).
const SIGNAL_LENGTHS = new Uint8Array(256)
const SIGNAL_FIRST_BYTES = new Uint8Array(256)
for (const name of SIGNAL_HEADER_NAMES) {
  if (name.length < 256) SIGNAL_LENGTHS[name.length] = 1
  const first = name.charCodeAt(0)
  SIGNAL_FIRST_BYTES[first & 0xff] = 1
}

function mayBeSignalName(name: Buffer | string | ReadonlyArray<Buffer | string>): boolean {
  // Signal names are ASCII, so a string and its bytes have the same length: one table read
  // rules out most names (content-type, date, …) before any lower-casing.
  if (typeof name === 'string') return SIGNAL_LENGTHS[name.length] === 1 && signalHeaderNames.has(name.toLowerCase())
  if (!(name instanceof Uint8Array)) return true
  // ASCII lower-casing of the first byte (| 0x20) suffices for the test: names are tokens.
  if (SIGNAL_LENGTHS[name.length] !== 1 || SIGNAL_FIRST_BYTES[name[0]! | 0x20] === 0) return false
  return signalHeaderNames.has(Buffer.from(name.buffer, name.byteOffset, name.length).toString('latin1').toLowerCase())
}

/**
 * `readResponseSignals` over raw headers. A response without any rate-limit field (the
 * usual case) costs one look at each name's length and first byte, and allocates nothing.
 */
export function readRawResponseSignals(status: number, raw: RawHeaders | null | undefined, now: number): Signal {
  return readRawResponseSignalsAt(status, raw, now)
}

/** As `readRawResponseSignals`, reading the clock (`now()`) only when a rate-limit field is there to read. */
export function readRawResponseSignalsAt(status: number, raw: RawHeaders | null | undefined, now: number | (() => number)): Signal {
  if (raw != null) {
    for (let i = 0; i < raw.length; i += 2) {
      if (mayBeSignalName(raw[i]!)) return readResponseSignals(status, parseRawHeaders(raw), typeof now === 'number' ? now : now())
    }
  }
  // A status alone says the same at any time (statusSignal never reads `now` without fields):
  // no clock read for the usual response.
  return statusOnly(status)
}

// The status of the last response and its Signal: a run of 200s costs one compare each.
let lastStatus = -1
let lastStatusSignal: Signal | undefined

function statusOnly(status: number): Signal {
  if (status === lastStatus) return lastStatusSignal!
  const signal = statusSignal(status, 0)
  lastStatus = status
  lastStatusSignal = signal
  return signal
}
