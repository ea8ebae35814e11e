// Client side of the telemetry endpoint. Fails open by construction: every call
// resolves (never rejects), with `undefined` when the endpoint is slow, down, refuses,
// or answers something that does not validate; the pacer then keeps pacing locally.
// Works wherever `fetch` does (pages, service workers, Node): no Node imports.
import type { Aggregate } from '../core/types.js'
import { PROTOCOL_VERSION, replyToAggregate, validateReply, validateReport } from './protocol.js'
import type { TelemetryReport } from './protocol.js'
import { wireScope } from './wire-scope.js'

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

function reportUrl(url: string | URL): string {
  const text = String(url)
  if (/\/v1\/report\/?$/.test(text)) return text
  return new URL('v1/report', text.endsWith('/') ? text : `${text}/`).toString()
}

export function createTelemetryLink(options: TelemetryLinkOptions): TelemetryLink {
  const target = reportUrl(options.url)
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const timeoutMs = options.timeoutMs ?? 3_000
  const timer = options.timer ?? defaultTimer
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (options.token) headers.authorization = `Bearer ${options.token}`

  async function exchange(report: LinkReport, signal: AbortSignal): Promise<Aggregate | undefined> {
    const wire = { ...report, scope: wireScope(report.scope), v: PROTOCOL_VERSION }
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
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      return undefined
    }
    const body = await readReply(response)
    if (body === undefined) return undefined
    const reply = validateReply(body)
    if (!reply.ok || reply.value.scope !== checked.value.scope) return undefined
    return replyToAggregate(reply.value)
  }

  return {
    report(report, signal) {
      if (signal?.aborted) return Promise.resolve(undefined)
      const controller = new AbortController()
      return new Promise<Aggregate | undefined>((resolve) => {
        // Before, nothing but the timeout ended a report: a client closed during one left its
        // request open and its timer pending for up to timeoutMs.
        const end = (): void => {
          timer.clear(handle)
          controller.abort()
          resolve(undefined)
        }
        const handle = timer.set(end, timeoutMs)
        signal?.addEventListener('abort', end, { once: true })
        exchange(report, controller.signal).then(
          (aggregate) => { timer.clear(handle); signal?.removeEventListener('abort', end); resolve(aggregate) },
          () => { timer.clear(handle); signal?.removeEventListener('abort', end); resolve(undefined) },
        )
      })
    },
  }
}
