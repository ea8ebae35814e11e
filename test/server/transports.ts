// The same endpoint reached three ways: the web-standard handler in process, and
// serve() over real HTTP on 127.0.0.1 with its fast path and with its web path.
// Handler tests run every case through all three, so the paths cannot drift apart.
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
