// node:http server for the telemetry endpoint. By default it takes a fast path that
// feeds node's request straight into the handler core, skipping Request/Response
// objects (that is most of the per-report cost); `fastPath: false` goes through the
// web-standard handler instead. Both paths run the same core, so they answer alike.
import { createServer, IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTelemetryHandler } from './create-telemetry-handler.js'
import { sourceKey } from './source-address.js'
import { StoreLayoutError } from './telemetry-store.js'
import type { TelemetryHandler } from './create-telemetry-handler.js'
import type { TelemetryHandlerOptions, TelemetryRequest, TelemetryResponse } from './handle-telemetry.js'

export interface ServeOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number
  /** Default 127.0.0.1 (pass 0.0.0.0 or :: to listen publicly). */
  host?: string
  /** A handler from createTelemetryHandler, or options to build one. */
  handler?: TelemetryHandler
  options?: TelemetryHandlerOptions
  /** Skip Request/Response objects (default true). */
  fastPath?: boolean
  /** A client must have sent its request headers within this. Default 5 000 ms. */
  headersTimeoutMs?: number
  /** ...and its whole request within this. Default 10 000 ms. */
  requestTimeoutMs?: number
  /** An idle keep-alive connection is closed after this. Default 5 000 ms. */
  keepAliveTimeoutMs?: number
  /** Open connections one source address may hold; further ones are closed at once. Default 64. */
  maxConnectionsPerSource?: number
}

/**
 * Node enforces the header and request timeouts only when it sweeps its connections, every
 * 30 s by default, so a 1 byte/s client outlived a 5 s limit by up to 30 s. Sweeping this
 * often makes a timeout fire at most this late.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 250

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly host: string
  /** `http://host:port` */
  readonly url: string
  close(): Promise<void>
}

/**
 * node's request as the core reads it, on the fast path: the request object itself, so a
 * report costs no wrapper object, no per-request closures (header lookup, body reader) and
 * no listener closures. Its body listeners are module functions that node calls with the
 * request as `this`. node builds one per request (createServer's IncomingMessage option).
 */
class FastRequest extends IncomingMessage implements TelemetryRequest {
  declare method: string
  /** Set once more than the limit arrived: the response then closes the connection. */
  tooLarge = false
  private bodyChunks: Buffer[] = []
  private bodySize = 0
  private bodyLimit = 0
  private settleBody: ((body: Uint8Array | 'too-large') => void) | undefined = undefined

  get target(): string {
    return this.url ?? '/'
  }

  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress
  }

  header(name: string): string | null {
    const value = this.headers[name]
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
  }

  body(limitBytes: number): Promise<Uint8Array | 'too-large'> {
    return new Promise((resolve) => {
      this.settleBody = resolve
      this.bodyLimit = limitBytes
      this.on('data', onBodyChunk)
      this.on('end', onBodyEnd)
      // An aborted or failed upload ends in 'close' before 'end' ('error' is emitted only to listeners).
      this.on('close', onBodyClose)
    })
  }

  /** @internal */
  takeBodyChunk(chunk: Buffer): void {
    if (this.settleBody === undefined) return // refused already: keep draining so the client can read our 413
    this.bodySize += chunk.length
    if (this.bodySize > this.bodyLimit) {
      this.tooLarge = true
      this.finishBody('too-large')
      return
    }
    this.bodyChunks.push(chunk)
  }

  /** @internal */
  finishBody(body: Uint8Array | 'too-large' | undefined): void {
    const settle = this.settleBody
    if (settle === undefined) return
    this.settleBody = undefined
    const chunks = this.bodyChunks
    settle(body ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.bodySize)))
  }
}

function onBodyChunk(this: FastRequest, chunk: Buffer): void {
  this.takeBodyChunk(chunk)
}

function onBodyEnd(this: FastRequest): void {
  this.finishBody(undefined)
}

function onBodyClose(this: FastRequest): void {
  this.finishBody('too-large')
}

function send(res: ServerResponse, out: TelemetryResponse, close: boolean): void {
  // out.headers is a fresh object per response (built by the core): extend it in place
  // rather than copying, so writeHead can store it as given (this runs once per report).
  const headers: Record<string, string | number> = out.headers
  if (close) headers.connection = 'close'
  if (out.status !== 204) headers['content-length'] = Buffer.byteLength(out.body)
  res.writeHead(out.status, headers)
  res.end(out.status === 204 ? undefined : out.body)
}

/** The authority of the URL the web path builds; any fixed valid host does. */
const WEB_PATH_AUTHORITY = 'localhost'

export async function serve(options: ServeOptions = {}): Promise<RunningServer> {
  const handler = options.handler ?? createTelemetryHandler(options.options)
  // A store that will never serve (another version's Redis) stops the start; one that is only
  // unreachable does not: the handler answers 503 until it comes back.
  await options.options?.store?.ready?.().catch((error: unknown) => {
    if (error instanceof StoreLayoutError) throw error
  })
  const fastPath = options.fastPath ?? true
  const host = options.host ?? '127.0.0.1'

  const headersTimeout = options.headersTimeoutMs ?? 5_000
  const requestTimeout = options.requestTimeoutMs ?? 10_000
  const server = createServer({
    IncomingMessage: FastRequest,
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000,
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, headersTimeout, requestTimeout),
  }, (req, res) => {
    if (fastPath) {
      const request = req as FastRequest
      handler.core(request).then(
        (out) => send(res, out, request.tooLarge || out.status === 413),
        () => send(res, { status: 500, headers: {}, body: '' }, true),
      )
      return
    }
    void webPath(handler, req, res, WEB_PATH_AUTHORITY, req.socket.remoteAddress)
  })
  limitConnectionsPerSource(server, options.maxConnectionsPerSource ?? 64)

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 8787, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const urlHost = host.includes(':') ? `[${host}]` : host
  return {
    server,
    port,
    host,
    url: `http://${urlHost}:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    }),
  }
}

/** Close a source's connections beyond `max` as they arrive, so one address cannot hold every socket. */
function limitConnectionsPerSource(server: Server, max: number): void {
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    if (address === undefined) return
    const key = sourceKey(address)
    const count = (open.get(key) ?? 0) + 1
    if (count > max) {
      socket.destroy()
      return
    }
    open.set(key, count)
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1
      if (left <= 0) open.delete(key)
      else open.set(key, left)
    })
  })
}

async function webPath(handler: TelemetryHandler, req: IncomingMessage, res: ServerResponse, authority: string, remoteAddress: string | undefined): Promise<void> {
  try {
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value)
    }
    const method = req.method ?? 'GET'
    const hasBody = method !== 'GET' && method !== 'HEAD'
    // Backpressure: read from the socket only as fast as the handler consumes, so a
    // huge body the handler refuses is never buffered; whatever is left is discarded.
    let discard = false
    const body = hasBody
      ? new ReadableStream<Uint8Array>({
          start(controller) {
            req.on('data', (chunk: Buffer) => {
              if (discard) return
              controller.enqueue(new Uint8Array(chunk))
              if ((controller.desiredSize ?? 0) <= 0) req.pause()
            })
            req.on('end', () => { if (!discard) controller.close() })
            req.on('error', (error) => { if (!discard) controller.error(error) })
            req.pause()
          },
          pull() {
            req.resume()
          },
          cancel() {
            discard = true
            req.resume()
          },
        }, { highWaterMark: 1 })
      : null
    // The handler reads only the path and query: the authority is ours, never the client's
    // Host header, which node passes through unchecked ("a b" would make the URL throw → 500).
    const request = new Request(`http://${authority}${req.url ?? '/'}`, {
      method,
      headers,
      body,
      duplex: 'half',
    } as RequestInit)
    const response = await handler(request, remoteAddress ? { remoteAddress } : undefined)
    discard = true
    req.resume()
    const out: TelemetryResponse = { status: response.status, headers: {}, body: await response.text() }
    response.headers.forEach((value, name) => { out.headers[name] = value })
    send(res, out, response.status === 413)
  } catch {
    if (!res.headersSent) send(res, { status: 500, headers: {}, body: '' }, true)
  }
}
