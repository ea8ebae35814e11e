// A real HTTP server (node:http, 127.0.0.1) in front of ONE shared server model: the
// quota many clients share. Demos, benchmarks, the browser example and end-to-end
// tests run against it; the simulator uses the same models in virtual time.
//
// Time: the model runs on `(clock() − start) × timeScale`, so a timeScale of 10 turns
// 80 per minute into 800 per wall minute; every duration in the headers is divided
// back by timeScale, so clients see wall-clock figures consistent with what they get.
//
// Routes: any method and path spends one unit (200 `{"ok":true}` or 429); `OPTIONS` answers
// CORS preflights for free; `GET /__stats` returns `stats()`; `POST /__reset` calls `reset()`.
// A request may pick its feedback mode with `?feedback=<mode>` or an `x-feedback` header.
// No per-request logging or allocation beyond the response: benchmarks push thousands per second.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { feedbackHeaders } from './feedback-headers.js'
import { CORS_HEADERS, preflightHeaders } from './quota-server/cors.js'
import { statsRecorder, type StatsRecorder, type StatsSnapshot } from './quota-server/stats-recorder.js'
import { endpointLimits, type EndpointLimit, type EndpointLimitedModel } from './servers/endpoint-limits.js'
import { createServerModel } from './servers/index.js'
import type { Refill } from './servers/token-bucket.js'
import { FEEDBACK_MODES, type Admission, type Feedback, type QuotaConfig, type ServerKind } from './types.js'

export interface QuotaServerOptions {
  /** Default 0 (any free port). */
  port?: number
  /** Default `127.0.0.1`. */
  host?: string
  /** Server model; default `token-bucket-continuous` (or the token bucket named by `refill`). */
  kind?: ServerKind
  /** Default the paper's quota: capacity 100, 80 per minute (stepped: 60 s steps). */
  quota?: Partial<QuotaConfig>
  /** Picks the token-bucket variant; ignored for other kinds. */
  refill?: Refill
  /** Default `status-only` (the paper's); a request may override it with `?feedback=` or `x-feedback`. */
  feedback?: Feedback
  /** Per-endpoint limits under the global one. */
  endpoints?: readonly EndpointLimit[]
  /** Epoch ms; default `Date.now`. */
  clock?: () => number
  /** Model time runs this many times faster than wall time. Default 1. */
  timeScale?: number
}

export interface QuotaServerStats extends StatsSnapshot {
  kind: ServerKind
  feedback: Feedback
  quota: QuotaConfig
  timeScale: number
  /** Clock time (epoch ms) of the start or of the last reset; `perSecond` counts from it. */
  startedAt: number
}

export interface QuotaServer {
  /** `http://127.0.0.1:<port>` */
  url: string
  port: number
  close(): Promise<void>
  stats(): QuotaServerStats
  /** A full quota and zeroed stats, as if just started (e.g. between benchmark runs). */
  reset(): void
}

export const DEFAULT_QUOTA: QuotaConfig = { capacity: 100, perMinute: 80, stepIntervalMs: 60_000 }

const ADMITTED_BODY = Buffer.from('{"ok":true}')
const REJECTED_BODY = Buffer.from('{"error":"too many requests"}')

export function resolveKind(kind: ServerKind | undefined, refill: Refill | undefined): ServerKind {
  if (kind === undefined || kind === 'token-bucket-continuous' || kind === 'token-bucket-stepped') {
    if (refill !== undefined) return refill === 'stepped' ? 'token-bucket-stepped' : 'token-bucket-continuous'
  }
  return kind ?? 'token-bucket-continuous'
}

export function isFeedback(value: unknown): value is Feedback {
  return typeof value === 'string' && (FEEDBACK_MODES as readonly string[]).includes(value)
}

export async function startQuotaServer(options: QuotaServerOptions = {}): Promise<QuotaServer> {
  const clock = options.clock ?? Date.now
  const timeScale = options.timeScale ?? 1
  if (!(Number.isFinite(timeScale) && timeScale > 0)) throw new RangeError(`timeScale must be positive, got ${timeScale}`)
  const kind = resolveKind(options.kind, options.refill)
  const quota: QuotaConfig = { ...DEFAULT_QUOTA, ...options.quota }
  const defaultFeedback = options.feedback ?? 'status-only'
  const endpoints = options.endpoints ?? []
  const hasEndpoints = endpoints.length > 0

  let origin = 0
  let model: EndpointLimitedModel
  let recorder: StatsRecorder
  const reset = (): void => {
    origin = clock()
    model = endpointLimits({
      global: createServerModel(kind, quota, 0),
      endpoints,
      // Endpoint limits are per second: a stepped endpoint bucket refills every second.
      createModel: (endpointQuota, policy) =>
        createServerModel(kind, { ...endpointQuota, stepIntervalMs: 1000 }, 0, policy),
    })
    recorder = statsRecorder(origin)
  }
  reset() // throws here, before listening, on a bad quota

  const stats = (): QuotaServerStats => ({
    kind,
    feedback: defaultFeedback,
    quota: { ...quota },
    timeScale,
    startedAt: origin,
    ...recorder.snapshot(),
  })

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/'
    const method = req.method ?? 'GET'
    if (method === 'OPTIONS') {
      res.writeHead(204, preflightHeaders(req.headers['access-control-request-headers']))
      res.end()
      return
    }
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    if (path === '/__stats') return sendJson(res, 200, stats())
    if (path === '/__reset' && method === 'POST') {
      reset()
      return sendJson(res, 200, { ok: true })
    }

    const wallNow = clock()
    const modelNow = (wallNow - origin) * timeScale
    const admission = model.admitRequest(modelNow, 1, method, path)
    recorder.record(wallNow, admission.admitted, hasEndpoints ? (model.endpointOf(method, path) ?? 'global') : 'global')

    const feedback = feedbackOf(req, url, q) ?? defaultFeedback
    const shown = timeScale === 1 ? admission : toWallTime(admission, timeScale)
    const headers: Record<string, string | number> = { ...CORS_HEADERS, 'Content-Type': 'application/json' }
    if (feedback !== 'status-only') {
      for (const [name, value] of feedbackHeaders(shown, feedback, wallNow)) headers[name] = value
    }
    const body = admission.admitted ? ADMITTED_BODY : REJECTED_BODY
    headers['Content-Length'] = body.length
    res.writeHead(admission.admitted ? 200 : 429, headers)
    res.end(body)
  }

  const server = createServer((req, res) => {
    // The body is never needed; draining it keeps keep-alive connections usable.
    req.resume()
    try {
      handle(req, res)
    } catch {
      if (!res.headersSent) res.writeHead(500, CORS_HEADERS)
      res.end()
    }
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const host = options.host ?? '127.0.0.1'
  const urlHost = host.includes(':') ? `[${host}]` : host

  return {
    url: `http://${urlHost}:${port}`,
    port,
    stats,
    reset,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // Keep-alive sockets would otherwise hold close() open until they time out.
        server.closeAllConnections()
      }),
  }
}

function feedbackOf(req: IncomingMessage, url: string, q: number): Feedback | undefined {
  const header = req.headers['x-feedback']
  if (isFeedback(header)) return header
  if (q === -1) return undefined
  let at = url.indexOf('feedback=', q)
  while (at !== -1 && url[at - 1] !== '?' && url[at - 1] !== '&') at = url.indexOf('feedback=', at + 1)
  if (at === -1) return undefined
  const end = url.indexOf('&', at)
  const value = url.slice(at + 'feedback='.length, end === -1 ? undefined : end)
  return isFeedback(value) ? value : undefined
}

function toWallTime(admission: Admission, timeScale: number): Admission {
  const scaled: Admission = {
    ...admission,
    resetMs: admission.resetMs / timeScale,
    windowMs: admission.windowMs / timeScale,
  }
  if (admission.retryAfterMs !== undefined) scaled.retryAfterMs = admission.retryAfterMs / timeScale
  return scaled
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value))
  res.writeHead(status, { ...CORS_HEADERS, 'Content-Type': 'application/json', 'Content-Length': body.length })
  res.end(body)
}
