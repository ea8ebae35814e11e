// Client side of the telemetry endpoint. Fails open by construction: every call
// resolves (never rejects), with `undefined` when the endpoint is slow, down, refuses,
// or answers something that does not validate; the pacer then keeps pacing locally.
// Works wherever `fetch` does (pages, service workers, Node): no Node imports.
import type { Aggregate } from '../core/types.js'
import { PROTOCOL_VERSION, replyToAggregate, validateReply, validateReport } from './protocol.js'
import type { TelemetryReport } from './protocol.js'
import { failureReasonOf, TelemetryError } from './telemetry-error.js'
import { timerDelayMs } from './timer-delay.js'
import { wireClientId, wireScope } from './wire-name.js'

/** Timers, injectable so tests need not wait for real time. */
export interface LinkTimer {
  set(callback: () => void, ms: number): unknown
  clear(handle: unknown): void
}

export interface TelemetryLinkOptions {
  /** Endpoint base URL (`https://telemetry.example.com`) or the full `/v1/report` URL. */
  url: string | URL
  /** Bearer token of the tenant. */
  token?: string
  /** The fetch to use. Default globalThis.fetch (never the paced fetch: reports must not queue behind requests). */
  fetch?: typeof fetch
  /** Give up on a report after this long. Default 3 000 ms (the paper's). */
  timeoutMs?: number
  timer?: LinkTimer
  /** Told why each report that went out came back without an aggregate (not for reports ended by `signal`). */
  onFailure?: (error: TelemetryError) => void
}

export type LinkReport = Omit<TelemetryReport, 'v'>

export interface TelemetryLink {
  /**
   * Send one report; resolves the scope's aggregate, or undefined on any failure. Never rejects.
   * `signal` ends it early (the client closing): the fetch is aborted, its timeout cleared, undefined.
   */
  report(report: LinkReport, signal?: AbortSignal): Promise<Aggregate | undefined>
}

const defaultTimer: LinkTimer = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
}

/**
 * Longest reply read. A reply is about 200 bytes; `response.json()` read whatever came, so an
 * endpoint streaming a 64 MiB "reply" within the timeout had all of it buffered and parsed.
 */
const MAX_REPLY_BYTES = 16 * 1024

/** The reply's JSON, or undefined when it is not JSON or runs past MAX_REPLY_BYTES (the rest is not read). */
async function readReply(response: Response): Promise<unknown> {
  const body = response.body
  if (body === null) return undefined
  const reader = body.getReader()
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    parts.push(value)
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const part of parts) {
    bytes.set(part, at)
    at += part.byteLength
  }
  try {
    return JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    return undefined
  }
}

/**
 * The report URL of the endpoint's base URL, or of the report URL itself. A relative URL is
 * read against the page, as fetch reads it (before, `/telemetry` threw "Invalid URL" while
 * `/v1/report` passed), and a query is kept (before, `…/base?tenant=x` posted to `/v1/report`).
 * A report URL with a trailing slash loses it (before, every report to it was a 404).
 */
function reportUrl(url: string | URL): string {
  const page = (globalThis as { location?: { href?: unknown } }).location?.href
  const target = new URL(String(url), typeof page === 'string' ? page : undefined)
  // `…/v1/report/` is the report URL too, without its slash: the endpoint answers it 404.
  target.pathname = /\/v1\/report\/?$/.test(target.pathname)
    ? target.pathname.replace(/\/$/, '')
    : `${target.pathname.replace(/\/$/, '')}/v1/report`
  return target.href
}

export function createTelemetryLink(options: TelemetryLinkOptions): TelemetryLink {
  const target = reportUrl(options.url)
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const timeoutMs = timerDelayMs(options.timeoutMs, 3_000)
  const timer = options.timer ?? defaultTimer
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (options.token) headers.authorization = `Bearer ${options.token}`

  async function exchange(report: LinkReport, signal: AbortSignal): Promise<Aggregate | undefined> {
    const wire = { ...report, scope: wireScope(report.scope), clientId: wireClientId(report.clientId), v: PROTOCOL_VERSION }
    let checked = validateReport(wire)
    // A quota the API announced beyond the protocol's range (a yearly window, 10^10 units) is
    // only a hint: without it the counts still go, where before the lane never reported again.
    if (!checked.ok && wire.quota !== undefined) checked = validateReport({ ...wire, quota: undefined })
    if (!checked.ok) return undefined
    const response = await doFetch(target, {
      method: 'POST',
      headers,
      body: JSON.stringify(checked.value),
      // Lets a page's last report outlive the page; small bodies only (64 KiB), ours are < 1 KiB.
      keepalive: true,
      signal,
      credentials: 'omit',
    })
    const scope = report.scope // the lane's, as the user knows it (the wire's may be encoded)
    if (!response.ok) {
      // The endpoint's own words ({ error, message }, small) make the failure clear: "unknown bearer token".
      const said = await readReply(response).catch(() => undefined)
      const { message: detail, error: code } = said !== null && typeof said === 'object' ? (said as { message?: unknown; error?: unknown }) : {}
      const reason = failureReasonOf(response.status)
      throw new TelemetryError(reason, response.status, scope, `polite-fetch: the telemetry endpoint refused a report on ${scope}: ${response.status} ${reason}${typeof detail === 'string' ? ` (${detail.slice(0, 200)})` : ''}; pacing alone (ATB) meanwhile`, typeof code === 'string' ? code.slice(0, 64) : undefined)
    }
    const body = await readReply(response)
    const reply = body === undefined ? undefined : validateReply(body)
    if (!reply?.ok || reply.value.scope !== checked.value.scope) {
      const problem = reply === undefined ? 'not JSON, or over 16 KiB' : reply.ok ? `for scope ${reply.value.scope}` : reply.error
      throw new TelemetryError('invalid-reply', response.status, scope, `polite-fetch: the telemetry endpoint answered a report on ${scope} with no valid aggregate (${problem}); pacing alone (ATB) meanwhile`)
    }
    return replyToAggregate(reply.value)
  }

  function fail(error: TelemetryError): void {
    try {
      options.onFailure?.(error)
    } catch (thrown) {
      // A failing observer must not break reporting; surfaced as an uncaught error, as events are.
      queueMicrotask(() => { throw thrown })
    }
  }

  return {
    report(report, signal) {
      if (signal?.aborted) return Promise.resolve(undefined)
      const controller = new AbortController()
      return new Promise<Aggregate | undefined>((resolve) => {
        // Before, nothing but the timeout ended a report: a client closed during one left its
        // request open and its timer pending for up to timeoutMs.
        let settled = false
        const settle = (aggregate: Aggregate | undefined, failure?: TelemetryError): void => {
          if (settled) return
          settled = true
          timer.clear(handle)
          signal?.removeEventListener('abort', end)
          if (aggregate === undefined) controller.abort()
          if (failure !== undefined) fail(failure)
          resolve(aggregate)
        }
        const end = (): void => settle(undefined)
        const handle = timer.set(() => {
          settle(undefined, new TelemetryError('timeout', 0, report.scope, `polite-fetch: the telemetry endpoint did not answer a report on ${report.scope} within ${timeoutMs} ms; pacing alone (ATB) meanwhile`))
        }, timeoutMs)
        signal?.addEventListener('abort', end, { once: true })
        exchange(report, controller.signal).then(
          (aggregate) => settle(aggregate),
          (error: unknown) => settle(undefined, error instanceof TelemetryError ? error : new TelemetryError('network', 0, report.scope, `polite-fetch: the telemetry endpoint could not be reached for a report on ${report.scope} (${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}); pacing alone (ATB) meanwhile`)),
        )
      })
    },
  }
}
