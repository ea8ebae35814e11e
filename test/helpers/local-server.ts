// A real HTTP server on 127.0.0.1 (random port) answering from a script, for tests
// of the fetch shell. Every request is recorded with its body; replies are taken in
// order from the script (then the default reply). A reply can also hang (never
// answer, until the server closes) or destroy the socket (a network error).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface RecordedRequest {
  method: string
  /** Path and query. */
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export type Reply = { status?: number; headers?: Record<string, string>; body?: string } | 'hang' | 'destroy'

export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  origin: string
  requests: RecordedRequest[]
  /** Queues replies, used in order by the next requests. */
  reply(...replies: Reply[]): void
  /** The reply when the script is empty. @default { status: 200, body: 'ok' } */
  setDefault(reply: Reply | ((request: RecordedRequest) => Reply)): void
  /** Resolves once `count` requests have arrived; rejects after a bounded real-time wait. */
  waitForRequests(count: number, limitMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startLocalServer(): Promise<LocalServer> {
  const requests: RecordedRequest[] = []
  const script: Reply[] = []
  let fallback: Reply | ((request: RecordedRequest) => Reply) = { status: 200, body: 'ok' }
  const hanging = new Set<ServerResponse>()
  const sockets = new Set<Socket>()

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('error', () => {})
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(recorded)
      const reply = script.shift() ?? (typeof fallback === 'function' ? fallback(recorded) : fallback)
      if (reply === 'hang') {
        hanging.add(res)
        return
      }
      if (reply === 'destroy') {
        req.socket.destroy()
        return
      }
      res.writeHead(reply.status ?? 200, reply.headers ?? {})
      res.end(reply.body ?? '')
    })
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => {
      script.push(...replies)
    },
    setDefault: (reply) => {
      fallback = reply
    },
    async waitForRequests(count, limitMs = 5_000) {
      const giveUpAt = performance.now() + limitMs
      while (requests.length < count) {
        if (performance.now() > giveUpAt) throw new Error(`expected ${count} requests, got ${requests.length}`)
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
