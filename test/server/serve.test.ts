import { connect } from 'node:net'
import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { serve } from '../../src/server/serve.js'
import type { RunningServer } from '../../src/server/serve.js'

/** One raw HTTP/1.1 exchange: fetch cannot send a Host header node accepts but a URL does not. */
function exchange(port: number, request: string, localAddress = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress })
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

describe('serve() against malformed HTTP', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })
  const valid = JSON.stringify({ v: 1, scope: 'api', clientId: 'after', attempts: 1, throttled: 0 })
  const validPost = `POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${valid.length}\r\nConnection: close\r\n\r\n${valid}`

  for (const fastPath of [true, false]) {
    it.each([
      ['a Content-Length of 10^11 with one byte sent', 'POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{', '413'],
      ['a Content-Length that is not a number', 'POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n', '400'],
      ['both Content-Length and chunked', 'POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', '400'],
      ['a chunk size that is not hex', 'POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', '400'],
      ['a request line of garbage', 'GARBAGE\r\n\r\n', '400'],
      ['an absolute-form target', 'GET http://evil.example/v1/fleet HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '404'],
      ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '204'],
      ['an Upgrade request', 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n', '200'],
      ['CONNECT', 'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n', ''],
    ])(`answers %s (or closes), and keeps serving (fastPath ${fastPath})`, async (_name, request, status) => {
      server = await serve({ port: 0, fastPath, options: { rateLimit: false } })
      const reply = await exchangeOpen(server.port, request)
      if (status) expect(reply.slice(0, 12)).toBe(`HTTP/1.1 ${status}`)
      else expect(reply).toBe('') // no handler for CONNECT: node closes the socket
      const after = await exchange(server.port, validPost)
      expect(after.slice(0, 12)).toBe('HTTP/1.1 200')
    })

    it(`answers a report refused before its body was read, then closes that connection; a new one is served (fastPath ${fastPath})`, async () => {
      server = await serve({ port: 0, fastPath, options: { rateLimit: false } })
      // node closes a connection whose request body was not read when the response ends, rather than
      // read on: the pipelined report after it is not answered there, and nothing is left hanging.
      const refused = `POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 3000\r\n\r\n${'x'.repeat(3000)}`
      const replies = await exchange(server.port, `${refused}${validPost}`)
      expect([...replies.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((match) => match[1])).toEqual(['415'])
      expect((await exchange(server.port, validPost)).slice(0, 12)).toBe('HTTP/1.1 200')
    })
  }
})

/** Send `request` and resolve what came back once the server closed or went quiet (bounded: 2 s). */
function exchangeOpen(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      text += chunk
      // one complete response is enough: the server may keep the connection for the next
      const head = text.indexOf('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(text)
      if (head >= 0 && (!length || text.length >= head + 4 + Number(length[1]))) socket.destroy()
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve(text))
    socket.setTimeout(2_000, () => socket.destroy())
    socket.write(request)
  })
}

/** Open a raw connection (from `localAddress`) and resolve how long the server kept it open, in ms. */
function heldFor(port: number, drip: (socket: Socket) => void, localAddress = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress })
    const started = performance.now()
    socket.on('connect', () => drip(socket))
    socket.on('error', () => {}) // a reset is an end too
    socket.on('close', () => resolve(performance.now() - started))
    socket.setTimeout(20_000, () => reject(new Error('still open after 20 s')))
    socket.resume()
  })
}

/** Write `text` one byte per `everyMs`, while the socket is open (bounded by the text's length). */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0
  const timer = setInterval(() => {
    if (i >= text.length || socket.destroyed) return clearInterval(timer)
    socket.write(text[i++]!)
  }, everyMs)
  socket.once('close', () => clearInterval(timer))
}

describe('serve() fast path bodies', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('keeps serving after a client drops its connection halfway through a body', async () => {
    server = await serve({ port: 0, options: { rateLimit: false } })
    const { port } = server
    await new Promise<void>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1' })
      socket.on('error', () => {})
      socket.on('close', () => resolve())
      socket.write('POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"v":1,', () => {
        setTimeout(() => socket.destroy(), 50)
      })
    })
    const body = JSON.stringify({ v: 1, scope: 'api', clientId: 'after', attempts: 1, throttled: 0 })
    const reply = await exchange(port, `POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)
    expect(reply.slice(0, 12)).toBe('HTTP/1.1 200')
    expect(reply).toContain('"activeClients":1')
  })

  it('answers a body sent in several chunks, and one just over the limit with 413 and a close', async () => {
    server = await serve({ port: 0, options: { rateLimit: false, maxBodyBytes: 200 } })
    const { port } = server
    const body = JSON.stringify({ v: 1, scope: 'api', clientId: 'chunks', attempts: 2, throttled: 1 })
    const chunked = await new Promise<string>((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1' })
      let text = ''
      socket.setEncoding('latin1')
      socket.on('data', (chunk: string) => (text += chunk))
      socket.on('end', () => resolve(text))
      socket.on('error', reject)
      socket.write(`POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`)
      setTimeout(() => socket.write(body.slice(10, 30)), 30)
      setTimeout(() => socket.end(body.slice(30)), 60)
    })
    expect(chunked.slice(0, 12)).toBe('HTTP/1.1 200')
    expect(chunked).toContain('"totalAttempts":2')
    // Chunked transfer (no Content-Length), so the limit is found while reading, not from the header.
    const big = JSON.stringify({ v: 1, scope: 'api', clientId: 'x'.repeat(190), attempts: 1, throttled: 0 })
    const refused = await exchange(port, `POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`)
    expect(refused.slice(0, 12)).toBe('HTTP/1.1 413')
    expect(refused.toLowerCase()).toContain('connection: close')
  })
})

describe('serve() timeouts and connection bounds', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })
  const slowHead = `POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${'X-Pad: y\r\n'.repeat(50)}\r\n`

  it('cuts a client that sends its headers at 1 byte per 200 ms within 1 s of the headers timeout', async () => {
    server = await serve({ port: 0, headersTimeoutMs: 1_500, requestTimeoutMs: 3_000, options: { rateLimit: false } })
    const held = await heldFor(server.port, (socket) => trickle(socket, slowHead, 200))
    expect(held).toBeGreaterThanOrEqual(1_400)
    expect(held).toBeLessThanOrEqual(2_500)
  })

  it('cuts a client that sends its body slowly within 1 s of the request timeout', async () => {
    server = await serve({ port: 0, headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, options: { rateLimit: false } })
    const body = JSON.stringify({ v: 1, scope: 'api', clientId: 'slow', attempts: 1, throttled: 0 })
    const held = await heldFor(server.port, (socket) => {
      socket.write(`POST /v1/report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
      trickle(socket, body, 200)
    })
    expect(held).toBeGreaterThanOrEqual(1_900)
    expect(held).toBeLessThanOrEqual(3_000)
  })

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    server = await serve({ port: 0, keepAliveTimeoutMs: 500, options: { rateLimit: false } })
    const held = await heldFor(server.port, (socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'))
    // node:http waits 1 s beyond keepAliveTimeout before it closes (a margin for clients racing the close)
    expect(held).toBeGreaterThanOrEqual(400)
    expect(held).toBeLessThanOrEqual(2_500)
  })

  it('closes connections from one address beyond the cap, and only from that address', async () => {
    server = await serve({ port: 0, maxConnectionsPerSource: 2, options: { rateLimit: false } })
    const port = server.port
    const sockets = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')]
    await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve))))
    await new Promise((resolve) => setTimeout(resolve, 50)) // the server has seen both
    const third = await heldFor(port, () => {})
    expect(third).toBeLessThan(1_000) // closed at once, not after a timeout
    const other = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '127.0.0.2')
    expect(other.slice(0, 12)).toBe('HTTP/1.1 200')
    for (const socket of sockets) socket.destroy()
  })
})
