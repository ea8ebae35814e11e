import { Readable } from 'node:stream'
import { FormData as UndiciFormData } from 'undici'
import { describe, expect, it } from 'vitest'
import { bufferBody, isReplayableBody } from '../../src/node/replayable-body.js'

describe('isReplayableBody', () => {
  it('accepts bodies undici sends again unchanged', () => {
    const bodies = [undefined, null, '', 'text', Buffer.from('x'), new Uint8Array(2), new ArrayBuffer(2), new Blob(['x']), new UndiciFormData(), new FormData()]
    for (const body of bodies) expect(isReplayableBody(body)).toBe(true)
  })

  it('refuses bodies the first attempt consumes', () => {
    async function* generator() {
      yield 'x'
    }
    for (const body of [Readable.from(['x']), generator(), [Buffer.from('x')][Symbol.iterator]()]) {
      expect(isReplayableBody(body)).toBe(false)
    }
  })
})

describe('bufferBody', () => {
  const never = () => false

  it('reads a stream, an async iterable or an iterable of strings and bytes into one Buffer', async () => {
    async function* generator() {
      yield 'a'
      yield new Uint8Array([0x62])
    }
    for (const body of [Readable.from([Buffer.from('a'), Buffer.from('b')]), generator(), ['a', Buffer.from('b')][Symbol.iterator]()]) {
      const read = await bufferBody(body, 10, never)
      expect(read?.replayable).toBe(true)
      expect((read?.body as Buffer).toString()).toBe('ab')
    }
  })

  it('past maxBytes hands back everything as a one-shot stream', async () => {
    const read = await bufferBody(Readable.from([Buffer.from('1234'), Buffer.from('5678'), Buffer.from('9')]), 5, never)
    expect(read?.replayable).toBe(false)
    const parts: Buffer[] = []
    for await (const chunk of read!.body as AsyncIterable<Buffer>) parts.push(chunk)
    expect(Buffer.concat(parts).toString()).toBe('123456789')
  })

  it('keeps what each chunk held when it was read, even from a producer that reuses its buffer', async () => {
    // A producer that fills one buffer per chunk is safe with undici, which writes each chunk
    // before asking for the next. Read ahead here, every chunk was the last one's bytes before:
    // 'cccccccccccc' sent for 'aaaabbbbcccc', on every attempt.
    async function* reusing(): AsyncGenerator<Buffer> {
      const buffer = Buffer.alloc(4)
      for (const word of ['aaaa', 'bbbb', 'cccc']) {
        buffer.write(word)
        yield buffer
      }
    }
    expect(((await bufferBody(reusing(), 100, never))?.body as Buffer).toString()).toBe('aaaabbbbcccc')
    // Past maxBytes, the chunks read ahead are replayed as they were read, then the rest.
    const read = await bufferBody(reusing(), 6, never)
    const parts: string[] = []
    for await (const chunk of read!.body as AsyncIterable<Buffer>) parts.push(chunk.toString())
    expect(parts.join('')).toBe('aaaabbbbcccc')
  })

  it('stops (and releases the source) once the caller is gone', async () => {
    let released = false
    async function* generator() {
      try {
        yield 'a'
        yield 'b'
      } finally {
        released = true
      }
    }
    let stop = false
    const read = bufferBody(generator(), 10, () => stop)
    stop = true
    expect(await read).toBeUndefined()
    expect(released).toBe(true)
  })

  it('rejects a body that is neither bytes nor iterable', async () => {
    await expect(bufferBody(42, 10, never)).rejects.toThrow(TypeError)
  })
})
