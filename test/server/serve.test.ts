import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { serve } from '../../src/server/serve.js'
import type { RunningServer } from '../../src/server/serve.js'

/** One raw HTTP/1.1 exchange: fetch cannot send a Host header node accepts but a URL does not. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
    socket.end(request)
  })
}

describe('serve()', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  for (const fastPath of [true, false]) {
    it.each(['a b', '[::', 'x/y@z'])(`ignores a Host header %j (fastPath ${fastPath})`, async (host) => {
      server = await serve({ port: 0, fastPath, options: { rateLimit: false } })
      const health = await exchange(server.port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
      expect(health.slice(0, 12)).toBe('HTTP/1.1 200')
      const missing = await exchange(server.port, `GET /v1/nothing HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
      expect(missing.slice(0, 12)).toBe('HTTP/1.1 404')
    })
  }
})
