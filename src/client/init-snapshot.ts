// What a call's init holds at the call, kept for every attempt. fetch reads the headers and body
// once, when it is called; the client hands them to attempts that go out later (from the lane's
// queue, or as a retry), so a caller that reuses one object and moves it on per call (a headers
// record, a URLSearchParams, a buffer, set for each page in a loop) had every waiting call sent
// with the last call's values: three queued calls all sent page 3.
import type { FetchBody } from './fetch-types.js'

/** A copy of `headers` as they are now, in a form fetch reads the same way. */
export function snapshotHeaders(headers: HeadersInit): HeadersInit {
  if (Array.isArray(headers)) return headers.map((pair) => Array.from(pair)) as [string, string][]
  if (typeof Headers === 'function' && headers instanceof Headers) return new Headers(headers)
  if (typeof headers !== 'object' || headers === null) return headers
  // A record: its own enumerable keys, as fetch reads one (a one-shot iterable was listed before).
  return { ...(headers as Record<string, string>) }
}

/** A copy of a replayable body that the caller could change after the call; immutable ones as they are. */
export function snapshotBody(body: FetchBody): FetchBody {
  if (typeof body !== 'object' || body === null) return body
  if (typeof URLSearchParams === 'function' && body instanceof URLSearchParams) return new URLSearchParams(body)
  if (typeof FormData === 'function' && body instanceof FormData) {
    const copy = new FormData()
    body.forEach((value, name) => copy.append(name, value)) // a File keeps its name
    return copy
  }
  // Bytes: fetch copies them at the call too.
  if (body instanceof ArrayBuffer) return body.slice(0)
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice()
  return body // a Blob (immutable)
}
