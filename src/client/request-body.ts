// Making a request body sendable more than once. In-memory bodies (string,
// ArrayBuffer and views, Blob, URLSearchParams, FormData) can be handed to fetch again
// as they are: fetch serialises them afresh per call, so they need no copy. A
// Request's body is a stream: it is read once, up to `maxBodyBytes`, and the bytes are
// replayed. A stream (or a Request body over the bound) can be sent only once: the
// request goes out but is not retried, and the caller is told why, instead of the
// second attempt failing with "Body has already been used".

import { noop } from './timer.js'

/** A body that can be handed to fetch again on every attempt. */
export function isReplayableBody(body: unknown): boolean {
  if (typeof body === 'string') return true
  if (typeof body !== 'object' || body === null) return false
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return true
  if (typeof Blob !== 'undefined' && body instanceof Blob) return true
  if (typeof URLSearchParams !== 'undefined' && body instanceof URLSearchParams) return true
  if (typeof FormData !== 'undefined' && body instanceof FormData) return true
  return false
}

export type BoundedBody =
  | { replayable: true; bytes: Uint8Array }
  /** Over the bound: the part already read followed by the rest, to be sent once. */
  | { replayable: false; stream: ReadableStream<Uint8Array> }

/**
 * Reads `body` whole if it fits in `maxBytes`; otherwise returns a stream that sends it all, once.
 * The read can take as long as the stream's producer: when one of `stops` aborts first, the read
 * rejects with its reason and the body is cancelled, so a caller's abort (or the client's close)
 * settles the call even while its body is still arriving.
 */
export function readBounded(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  stops: readonly (AbortSignal | undefined)[] = [],
): Promise<BoundedBody> {
  const reader = body.getReader()
  const signals = stops.filter((signal): signal is AbortSignal => signal !== undefined)
  if (signals.length === 0) return read(reader, maxBytes)
  return new Promise<BoundedBody>((resolve, reject) => {
    const listeners: [AbortSignal, () => void][] = []
    const detach = (): void => {
      for (const [signal, listener] of listeners) signal.removeEventListener('abort', listener)
    }
    const stop = (signal: AbortSignal): void => {
      detach()
      reject(signal.reason)
      reader.cancel(signal.reason).catch(noop)
    }
    for (const signal of signals) {
      if (signal.aborted) {
        stop(signal)
        return
      }
      const listener = (): void => stop(signal)
      listeners.push([signal, listener])
      signal.addEventListener('abort', listener)
    }
    read(reader, maxBytes).then(
      (result) => {
        detach()
        resolve(result)
      },
      (error: unknown) => {
        detach()
        reject(error)
      },
    )
  })
}

async function read(reader: ReadableStreamDefaultReader<Uint8Array>, maxBytes: number): Promise<BoundedBody> {
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return { replayable: true, bytes: concat(chunks, total) }
    chunks.push(value)
    total += value.byteLength
    if (total > maxBytes) return { replayable: false, stream: resume(chunks, reader) }
  }
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

function resume(chunks: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  let next = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next < chunks.length) {
        controller.enqueue(chunks[next++] as Uint8Array)
        return
      }
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
}
