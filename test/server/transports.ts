// The same endpoint reached three ways: the web-standard handler in process, and
// serve() over real HTTP on 127.0.0.1 with its fast path and with its web path.
// Handler tests run every case through all three, so the paths cannot drift apart.
import { request, type Agent } from 'node:http'
import { createTelemetryHandler } from '../../src/server/create-telemetry-handler.js'
import type { TelemetryHandlerOptions } from '../../src/server/handle-telemetry.js'
import { serve } from '../../src/server/serve.js'

export interface Reply {
  status: number
  headers: Headers
  text: string
  json(): any
}

export interface Endpoint {
  send(method: string, path: string, init?: { headers?: Record<string, string>; body?: string | Uint8Array<ArrayBuffer> }): Promise<Reply>
  close(): Promise<void>
}

export type Transport = { name: string; open(options: TelemetryHandlerOptions): Promise<Endpoint> }

async function toReply(response: Response): Promise<Reply> {
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
}

export const transports: Transport[] = [
  {
    name: 'web handler',
    async open(options) {
      const handler = createTelemetryHandler(options)
      return {
        send: async (method, path, init = {}) =>
          toReply(await handler(new Request(`http://telemetry.test${path}`, { method, headers: init.headers, body: init.body }))),
        close: async () => {},
      }
    },
  },
  ...[true, false].map((fastPath): Transport => ({
    name: fastPath ? 'serve() fast path' : 'serve() web path',
    async open(options) {
      const server = await serve({ port: 0, options, fastPath })
      return {
        send: async (method, path, init = {}) =>
          toReply(await fetch(`${server.url}${path}`, { method, headers: init.headers, body: init.body })),
        close: () => server.close(),
      }
    },
  })),
]

/**
 * POST a report (`{ v: 1, scope: 'api', ...body }`) over real HTTP from a chosen loopback address:
 * the server keys every per-source bound on the socket's address. `agent` keeps connections
 * alive across calls; without one each call has its own.
 */
export function postReportFrom(url: string, localAddress: string, token: string, body: object, agent?: Agent): Promise<{ status: number; json: any }> {
  const text = JSON.stringify({ v: 1, scope: 'api', ...body })
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port, path: '/v1/report', method: 'POST',
      ...(agent === undefined ? { localAddress, agent: false } : { agent }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'content-length': Buffer.byteLength(text) },
    }, (res) => {
      let data = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (data += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(data) }))
    })
    req.on('error', reject)
    req.end(text)
  })
}
