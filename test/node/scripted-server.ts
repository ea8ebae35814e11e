// A real HTTP server on 127.0.0.1 whose answers are scripted per request, and which
// records what it received (method, path, body, arrival time).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  method: string
  path: string
  body: string
  headers: IncomingMessage['headers']
  atMs: number
  /** performance.now() when the reply was written. */
  sentAtMs?: number
}

export interface Reply {
  status: number
  headers?: Record<string, string>
  body?: string
  /** Hold the reply until this promise settles (to test aborts mid-flight). */
  holdUntil?: Promise<unknown>
  /** Drop the connection instead of answering (a network error for the client). */
  destroy?: boolean
}

export interface ScriptedServer {
  url: string
  received: Received[]
  /** The bodies as bytes, in arrival order. */
  receivedBytes: Buffer[]
  close(): Promise<void>
}

export async function startScriptedServer(
  script: (n: number, request: Received) => Reply,
): Promise<ScriptedServer> {
  const received: Received[] = []
  const receivedBytes: Buffer[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      receivedBytes.push(Buffer.concat(chunks))
      const request: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
        atMs: performance.now(),
      }
      received.push(request)
      const reply = script(received.length, request)
      const send = (): void => {
        if (res.destroyed) return
        if (reply.destroy) {
          req.socket.destroy()
          return
        }
        request.sentAtMs = performance.now()
        res.writeHead(reply.status, reply.headers ?? {})
        res.end(reply.body ?? '')
      }
      if (reply.holdUntil) void reply.holdUntil.then(send, send)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    receivedBytes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
