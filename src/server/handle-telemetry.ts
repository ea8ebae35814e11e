// The telemetry endpoint's logic, independent of how the request arrived: the
// web-standard handler (Request → Response) and the node:http fast path in serve()
// both adapt to this one function, so they cannot behave differently.
import { MAX_SCOPE_LENGTH, parseReport } from '../telemetry/protocol.js'
import { bearerToken, createAuthenticator, sameSecret } from './auth.js'
import type { AuthOptions } from './auth.js'
import { DASHBOARD_HTML } from './dashboard-html.js'
import { createKeyedRateLimiter } from './keyed-rate-limiter.js'
import { createMemoryStore } from './memory-store.js'
import { createMetrics } from './metrics.js'
import { replyJson } from './reply-json.js'
import { forwardedFor, sourceKey } from './source-address.js'
import { StoreUnavailableError } from './telemetry-store.js'
import type { ReportOrigin, TelemetryStore } from './telemetry-store.js'

/** A scope's quota refill rate: say the unit. */
export type QuotaRate = { perMinute: number } | { perSecond: number }

export interface ReportRateLimit {
  /** Reports per second one client id may send, sustained. Default 2. */
  perClientPerSecond?: number
  /** Burst of reports one client id may send. Default 10. */
  perClientBurst?: number
  /** Requests per second one source (remote address, or tenant when unknown), sustained. Default 500. */
  perSourcePerSecond?: number
  /** Burst of requests per source. Default 1 000. */
  perSourceBurst?: number
}

export interface TelemetryHandlerOptions {
  /** Where aggregates live. Default: the in-memory aggregator. */
  store?: TelemetryStore
  /** Quota rate per scope. A scope without one uses the rate learned from clients' RateLimit-Policy hints. */
  quotas?: Record<string, QuotaRate>
  /** Bearer tokens per tenant. Omitted or false: open mode (development only). */
  auth?: AuthOptions | false
  /**
   * The operator's token, distinct from every tenant token. When set, it alone may read
   * `/metrics`, the dashboard's data and any tenant's aggregate. Without it `/metrics` is
   * open, and the dashboard's data is served only in open mode.
   */
  adminToken?: string
  /** Behind a reverse proxy you run: take the source address from the last `X-Forwarded-For` entry. Default false. */
  trustProxy?: boolean
  /** Report rate limits; false disables them (benchmarks). */
  rateLimit?: ReportRateLimit | false
  /** Origins allowed to call from browsers: '*' (default) or a list. */
  corsOrigins?: '*' | readonly string[]
  /** Largest body accepted, bytes. Default 4 096. */
  maxBodyBytes?: number
  /** Epoch ms. Default Date.now. */
  now?: () => number
}

/** A request as the core sees it. */
export interface TelemetryRequest {
  method: string
  /** Path and query, e.g. `/v1/aggregate?scope=x`. */
  target: string
  /** Header value by lower-case name, or null. */
  header(name: string): string | null
  /** The body bytes, or 'too-large' as soon as more than `limitBytes` arrived. */
  body(limitBytes: number): Promise<Uint8Array | 'too-large'>
  remoteAddress?: string
}

export interface TelemetryResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export type TelemetryCore = (request: TelemetryRequest) => Promise<TelemetryResponse>

const JSON_TYPE = 'application/json; charset=utf-8'
/** The dashboard runs only its own inline script and style, and talks only to this origin. */
const DASHBOARD_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
/** Routes counted by name in /metrics; anything else is 'other'. */
const ROUTES = new Set(['/v1/report', '/v1/aggregate', '/v1/fleet', '/healthz', '/metrics', '/'])
/** Scopes per tenant on the dashboard: the most recently reported. */
const DASHBOARD_SCOPES = 50

function quotaPerSecond(rate: QuotaRate): number {
  return 'perSecond' in rate ? rate.perSecond : rate.perMinute / 60
}

export function createTelemetryCore(options: TelemetryHandlerOptions = {}): TelemetryCore {
  const store = options.store ?? createMemoryStore()
  const now = options.now ?? Date.now
  const maxBodyBytes = options.maxBodyBytes ?? 4096
  const auth = createAuthenticator(options.auth)
  const metrics = createMetrics()
  const quotas = new Map<string, number>()
  for (const [scope, rate] of Object.entries(options.quotas ?? {})) quotas.set(scope, quotaPerSecond(rate))
  const limits = options.rateLimit === false ? undefined : options.rateLimit ?? {}
  const perClient = limits && createKeyedRateLimiter({ perSecond: limits.perClientPerSecond ?? 2, burst: limits.perClientBurst ?? 10 })
  const perSource = limits && createKeyedRateLimiter({ perSecond: limits.perSourcePerSecond ?? 500, burst: limits.perSourceBurst ?? 1000 })
  const corsOrigins = options.corsOrigins ?? '*'
  const adminToken = options.adminToken
  if (adminToken !== undefined) {
    if (!/^\S+$/.test(adminToken)) throw new TypeError('adminToken must be a non-empty token without spaces')
    if (options.auth && Object.hasOwn(options.auth.tokens, adminToken)) throw new TypeError('adminToken must differ from every tenant token')
  }
  const quotaOf = (scope: string) => quotas.get(scope)
  const decoder = new TextDecoder('utf-8', { fatal: true })

  function json(status: number, body: unknown, origin: string | null, extra?: Record<string, string>): TelemetryResponse {
    return jsonText(status, JSON.stringify(body), origin, extra)
  }

  function jsonText(status: number, text: string, origin: string | null, extra?: Record<string, string>): TelemetryResponse {
    // Built field by field (no spreads): this runs once per report on the hot path.
    const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'cache-control': 'no-store' }
    if (corsOrigins === '*') headers['access-control-allow-origin'] = '*'
    else if (origin && corsOrigins.includes(origin)) {
      headers['access-control-allow-origin'] = origin
      headers.vary = 'Origin'
    }
    if (extra) for (const name in extra) headers[name] = extra[name]!
    return { status, headers, body: text }
  }

  function cors(origin: string | null): Record<string, string> {
    if (corsOrigins === '*') return { 'access-control-allow-origin': '*' }
    if (origin && corsOrigins.includes(origin)) return { 'access-control-allow-origin': origin, vary: 'Origin' }
    return {}
  }

  const fail = (status: number, error: string, message: string, origin: string | null, extra?: Record<string, string>) =>
    json(status, { error, message }, origin, extra)

  function limited(waitMs: number, origin: string | null): TelemetryResponse {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000))
    return fail(429, 'rate_limited', 'too many reports; slow down', origin, { 'retry-after': String(seconds) })
  }

  async function report(request: TelemetryRequest, origin: string | null, from: ReportOrigin, allows: (scope: string) => boolean): Promise<TelemetryResponse> {
    const type = request.header('content-type') ?? ''
    if (type !== 'application/json' && !/^application\/json\s*(;|$)/i.test(type)) return fail(415, 'unsupported_media_type', 'content-type must be application/json', origin)
    const declared = Number(request.header('content-length') ?? '0')
    if (declared > maxBodyBytes) return fail(413, 'body_too_large', `body must be at most ${maxBodyBytes} bytes`, origin)
    const bytes = await request.body(maxBodyBytes)
    if (bytes === 'too-large') return fail(413, 'body_too_large', `body must be at most ${maxBodyBytes} bytes`, origin)
    let text: string
    try {
      text = decoder.decode(bytes)
    } catch {
      return fail(400, 'invalid_report', 'body is not valid UTF-8', origin)
    }
    const parsed = parseReport(text)
    if (!parsed.ok) return fail(400, 'invalid_report', parsed.error, origin)
    const value = parsed.value
    if (!allows(value.scope)) return fail(403, 'scope_forbidden', 'this token may not report on this scope', origin)
    const at = now()
    const wait = perClient ? perClient.take(`${from.source}\u0000${value.clientId}`, at) : 0
    if (wait > 0) return limited(wait, origin)
    const recorded = store.report(value, at, quotas.get(value.scope), from)
    const result = recorded instanceof Promise ? await recorded : recorded // the memory store's answer costs no tick
    if (!result.ok) {
      const seconds = String(Math.max(1, Math.ceil(result.retryAfterMs / 1000)))
      return fail(429, 'scope_limit', 'too many scopes for this token or address; one frees when a scope goes idle', origin, { 'retry-after': seconds })
    }
    if (!result.duplicate) metrics.countReport(value.throttled > 0)
    return jsonText(200, replyJson(result.reply), origin)
  }

  /** Is this the operator (the admin token)? */
  function isAdmin(request: TelemetryRequest): boolean {
    const token = bearerToken(request.header('authorization'))
    return adminToken !== undefined && token !== undefined && sameSecret(token, adminToken)
  }

  /** The operator's reads: with an admin token only its holder; without one only an open endpoint. */
  function operatorRefusal(request: TelemetryRequest, origin: string | null, openWithoutAdmin: boolean): TelemetryResponse | undefined {
    if (adminToken === undefined) {
      return openWithoutAdmin ? undefined : fail(403, 'admin_required', 'configure an admin token to read across tenants', origin)
    }
    if (isAdmin(request)) return undefined
    return fail(401, 'unauthorized', 'this route needs the admin token', origin, { 'www-authenticate': 'Bearer' })
  }

  async function aggregate(query: URLSearchParams, origin: string | null, tenant: string, allows: (scope: string) => boolean): Promise<TelemetryResponse> {
    const scope = query.get('scope')
    if (!scope || scope.length > MAX_SCOPE_LENGTH || !/^[\x21-\x7e]+$/.test(scope)) {
      return fail(400, 'invalid_scope', `scope must be 1..${MAX_SCOPE_LENGTH} visible ASCII characters`, origin)
    }
    if (!allows(scope)) return fail(403, 'scope_forbidden', 'this token may not read this scope', origin)
    return jsonText(200, replyJson(await store.read(tenant, scope, now(), quotas.get(scope))), origin)
  }

  async function fleet(origin: string | null): Promise<TelemetryResponse> {
    const at = now()
    const scopes = store.snapshot ? await store.snapshot(auth.tenants, at, DASHBOARD_SCOPES, quotaOf) : []
    return json(200, { now: at, scopes }, origin)
  }

  async function metricsPage(): Promise<TelemetryResponse> {
    const gauges = await store.gauges?.(now(), auth.tenants) ?? {}
    return { status: 200, headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }, body: metrics.render(gauges) }
  }

  // Not async: a report's promise is returned as it is, not wrapped in another (one per report).
  function route(request: TelemetryRequest, pathname: string, query: string, origin: string | null): TelemetryResponse | Promise<TelemetryResponse> {
    const method = request.method.toUpperCase()
    if (method === 'OPTIONS') {
      return {
        status: 204,
        headers: {
          ...cors(origin),
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': 'authorization, content-type',
          'access-control-max-age': '86400',
        },
        body: '',
      }
    }
    // Liveness only: it must not touch the store, so a Redis outage never restarts healthy instances.
    if (pathname === '/healthz') {
      return method === 'GET' || method === 'HEAD' ? json(200, { ok: true }, origin) : fail(405, 'method_not_allowed', 'use GET', origin, { allow: 'GET' })
    }
    if (pathname === '/metrics' || pathname === '/' || pathname === '/v1/fleet') {
      if (method !== 'GET' && method !== 'HEAD') return fail(405, 'method_not_allowed', 'use GET', origin, { allow: 'GET' })
      // The page itself holds no data (it asks /v1/fleet with the token it is given), so anyone may load it.
      if (pathname === '/') return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-frame-options': 'DENY', 'content-security-policy': DASHBOARD_CSP }, body: DASHBOARD_HTML }
      const refusal = operatorRefusal(request, origin, pathname === '/metrics' || auth.open)
      if (refusal) return refusal
      if (pathname === '/v1/fleet') return fleet(origin)
      return metricsPage()
    }
    const isReport = pathname === '/v1/report'
    if (!isReport && pathname !== '/v1/aggregate') return fail(404, 'not_found', 'no such route', origin)
    const wanted = isReport ? 'POST' : 'GET'
    if (method !== wanted) return fail(405, 'method_not_allowed', `use ${wanted}`, origin, { allow: wanted })
    const params = isReport ? undefined : new URLSearchParams(query)
    const otherTenant = params?.get('tenant')
    if (otherTenant != null) {
      // A read across tenants: the operator's, never a tenant token's.
      const refusal = operatorRefusal(request, origin, auth.open)
      if (refusal) return refusal
      return aggregate(params!, origin, otherTenant, () => true)
    }
    const who = auth.check(request.header('authorization'))
    if (!who.ok) return fail(who.status, 'unauthorized', who.error, origin, { 'www-authenticate': 'Bearer' })
    const address = (options.trustProxy ? forwardedFor(request.header('x-forwarded-for')) : undefined) ?? request.remoteAddress
    // Without an address (a host that does not pass one) the tenant is the only source there is.
    const source = address === undefined ? `tenant:${who.tenant}` : sourceKey(address)
    const wait = perSource ? perSource.take(source, now()) : 0
    if (wait > 0) return limited(wait, origin)
    return isReport
      ? report(request, origin, { tenant: who.tenant, source, trusted: who.trusted }, who.allows)
      : aggregate(params!, origin, who.tenant, who.allows)
  }

  const core: TelemetryCore = async (request) => {
    const origin = request.header('origin')
    const query = request.target.indexOf('?')
    const pathname = query < 0 ? request.target : request.target.slice(0, query)
    const search = query < 0 ? '' : request.target.slice(query + 1)
    const routeName = ROUTES.has(pathname) ? pathname : 'other'
    let response: TelemetryResponse
    try {
      response = await route(request, pathname, search, origin)
    } catch (error) {
      response = error instanceof StoreUnavailableError
        ? fail(503, 'store_unavailable', 'aggregates are unavailable; clients fall back to local pacing', origin, { 'retry-after': '1' })
        : fail(500, 'internal_error', 'unexpected error', origin)
    }
    metrics.countRequest(routeName, response.status)
    return response
  }
  return core
}
