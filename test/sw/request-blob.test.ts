import { describe, expect, it } from 'vitest'
import { requestBlob } from '../../sw/request-blob.js'

describe('requestBlob', () => {
  it('reads the whole body, with its type', async () => {
    const request = new Request('https://api.example/x', { method: 'POST', body: 'hello', headers: { 'content-type': 'text/plain' } })
    const blob = await requestBlob(request)
    expect(await blob.text()).toBe('hello')
    expect(blob.type).toBe('text/plain')
  })

  it('settles with the abort reason when the page aborts while its body is still arriving', async () => {
    const controller = new AbortController()
    const endless = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new Uint8Array(1)) })
    const request = new Request('https://api.example/x', { method: 'POST', body: endless, signal: controller.signal, duplex: 'half' } as RequestInit)
    const read = requestBlob(request)
    controller.abort(new DOMException('gone', 'AbortError'))
    await expect(read).rejects.toMatchObject({ name: 'AbortError', message: 'gone' })
  })
})
