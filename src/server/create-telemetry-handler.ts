// The endpoint as a web-standard handler: `(Request) => Promise<Response>`, for any
// runtime with fetch types (Node, Deno, Bun, workers) or a framework route.
import { createTelemetryCore } from './handle-telemetry.js'
import type { TelemetryCore, TelemetryHandlerOptions, TelemetryRequest } from './handle-telemetry.js'

export interface TelemetryHandlerInfo {
  /** The caller's address, when the host knows it (keys the per-source rate limit). */
  remoteAddress?: string
}

export type TelemetryHandler = ((request: Request, info?: TelemetryHandlerInfo) => Promise<Response>) & {
  /** The transport-independent core (serve() uses it directly on its fast path). */
  readonly core: TelemetryCore
}

/** Read at most `limitBytes` of a body stream; stop (and cancel the rest) once exceeded. */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, limitBytes: number): Promise<Uint8Array | 'too-large'> {
  if (!stream) return new Uint8Array(0)
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limitBytes) {
      reader.cancel().catch(() => {})
      return 'too-large'
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]!
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

export function createTelemetryHandler(options: TelemetryHandlerOptions = {}): TelemetryHandler {
  const core = createTelemetryCore(options)
  const handler = async (request: Request, info?: TelemetryHandlerInfo): Promise<Response> => {
    const url = new URL(request.url)
    const incoming: TelemetryRequest = {
      method: request.method,
      target: url.pathname + url.search,
      header: (name) => request.headers.get(name),
      body: (limit) => readLimited(request.body, limit).catch(() => 'too-large' as const),
    }
    if (info?.remoteAddress) incoming.remoteAddress = info.remoteAddress
    const out = await core(incoming)
    return new Response(out.status === 204 || out.body === '' ? null : out.body, { status: out.status, headers: out.headers })
  }
  return Object.assign(handler, { core })
}
