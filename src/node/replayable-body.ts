// Making an undici dispatch's body sendable more than once, as the fetch shell does for
// a Request's body. What undici can send again unchanged (none, a string, bytes, a Blob,
// a FormData, which undici serialises afresh per dispatch) is left alone. Everything
// else is consumed by the first attempt: a Readable, an async iterable (what every
// `fetch` hands its dispatcher, JSON strings included) or a one-shot iterable. Those are
// read up to `maxBytes` before the first attempt and replayed as one Buffer, byte for
// byte; a longer body is sent once, the part already read followed by the rest, and not
// retried.

/** A body undici sends again unchanged on every attempt. */
export function isReplayableBody(body: unknown): boolean {
  if (body == null) return true
  if (typeof body === 'string') return true
  if (ArrayBuffer.isView(body) || body instanceof ArrayBuffer) return true
  // By tag, as undici itself tells them (its own FormData is not the global one, and a
  // FormData is iterable: read as a stream it would yield its entries, not its bytes).
  const tag = (body as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag]
  return tag === 'Blob' || tag === 'File' || tag === 'FormData'
}

export type BufferedBody =
  | { replayable: true; body: Buffer }
  /** Over the bound: everything, once. */
  | { replayable: false; body: AsyncIterable<Buffer> }

type Chunk = Buffer | Uint8Array | string

function toBuffer(chunk: Chunk): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk)
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
}

/**
 * A chunk's bytes as they are now. undici writes each chunk before it asks for the next, so a
 * producer may fill one buffer again for every chunk; read ahead, a chunk kept by reference
 * would hold the last chunk's bytes.
 */
function snapshot(chunk: Chunk): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(toBuffer(chunk))
}

function iteratorOf(body: unknown): AsyncIterator<Chunk> | Iterator<Chunk> {
  const source = body as Partial<AsyncIterable<Chunk> & Iterable<Chunk>>
  const asyncIterator = source[Symbol.asyncIterator]
  if (typeof asyncIterator === 'function') return asyncIterator.call(source)
  const syncIterator = source[Symbol.iterator]
  if (typeof syncIterator === 'function') return syncIterator.call(source)
  throw new TypeError('polite-fetch: a request body must be a string, bytes, a Blob, FormData, a stream or an iterable')
}

/**
 * Reads `body` whole if it fits in `maxBytes`. `stopped()` is asked after every chunk: once
 * it says true (the caller aborted) the read ends early, the source is released and what
 * was read is dropped.
 */
export async function bufferBody(body: unknown, maxBytes: number, stopped: () => boolean): Promise<BufferedBody | undefined> {
  const iterator = iteratorOf(body)
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const step = await iterator.next()
    if (stopped()) {
      await iterator.return?.()
      return undefined
    }
    if (step.done === true) return { replayable: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total) }
    const chunk = snapshot(step.value)
    chunks.push(chunk)
    total += chunk.byteLength
    if (total > maxBytes) return { replayable: false, body: resume(chunks, iterator) }
  }
}

async function* resume(chunks: Buffer[], iterator: AsyncIterator<Chunk> | Iterator<Chunk>): AsyncIterable<Buffer> {
  yield* chunks
  for (;;) {
    const step = await iterator.next()
    if (step.done === true) return
    yield toBuffer(step.value)
  }
}
