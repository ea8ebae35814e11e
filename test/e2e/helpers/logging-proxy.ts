// A pass-through HTTP proxy in front of the quota server that logs every request carrying
// an `x-request-id` (with its `x-attempt` and the status the server answered): the
// end-to-end tests read it to show that no attempt of any call was sent twice. The quota
// server itself logs nothing per request (benchmarks push thousands per second through it).
import { createServer, request as forward, Agent } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SendRecord {
  id: string
  attempt: number
  status: number
  at: number
  /** The browser's connection, to tell a transport-level resend (same request on a new socket) from ours. */
  port: number
}

export interface LoggingProxy {
  url: string
  log: SendRecord[]
  close(): Promise<void>
}

export async function startLoggingProxy(target: string): Promise<LoggingProxy> {
  const upstream = new URL(target)
  // No keep-alive upstream: a reused socket that the quota server closes at its idle timeout
  // fails the forwarded request (ECONNRESET), and the browser then sees a network error that
  // no pacer caused (seen once in CI: a CORS-less 502, logged by Chromium as a CORS failure).
  const agent = new Agent({ keepAlive: false })
  const log: SendRecord[] = []
  const server = createServer((req, res) => {
    const id = req.headers['x-request-id']
    const attempt = Number(req.headers['x-attempt'])
    const out = forward(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        if (typeof id === 'string' && req.method !== 'OPTIONS') log.push({ id, attempt, status: answer.statusCode ?? 0, at: Date.now(), port: req.socket.remotePort ?? 0 })
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    out.on('error', () => {
      // An upstream failure is the proxy's, not the pacer's: answer a 502 the page may read
      // (CORS allowed), and log it as a send so that the test sees it.
      if (typeof id === 'string' && req.method !== 'OPTIONS') log.push({ id, attempt, status: 502, at: Date.now(), port: req.socket.remotePort ?? 0 })
      if (!res.headersSent) res.writeHead(502, { 'access-control-allow-origin': '*' })
      res.end()
    })
    req.pipe(out)
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok())
        server.closeAllConnections()
        agent.destroy()
      }),
  }
}
