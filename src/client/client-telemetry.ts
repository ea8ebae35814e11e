// AATB's wiring for a client: a telemetry link (fetch-based, fail-open) and a driver
// that reports from the limiter's lanes and feeds the fleet's aggregate back to their
// pacers. Nothing here is on a request's path: reports go out on a timer and after
// 429s, through the underlying fetch, never through the paced one.
import { createTelemetryDriver, type TelemetryDriver } from '../telemetry/telemetry-driver.js'
import type { TelemetryError } from '../telemetry/telemetry-error.js'
import { createTelemetryLink } from '../telemetry/telemetry-link.js'
import type { Limiter } from './create-limiter.js'

export interface ClientTelemetryOptions {
  /** The telemetry endpoint's report URL, e.g. `https://telemetry.example.com/v1/report`. */
  url: string | URL
  /** Bearer token of the tenant. */
  token?: string
  /** Stable id of this client (browser profile, worker, process). @default a random UUID */
  clientId?: string
  /** A report that takes longer is dropped and the client paces alone (ATB). @default 3000 */
  timeoutMs?: number
  /** How often lanes are checked for a due report (reports themselves follow the pacer's window). @default 1000 */
  tickMs?: number
  /**
   * Told when reports start failing, and why (`error.reason`: `unauthorized` for a wrong token,
   * `forbidden`, `rate-limited`, `rejected`, `unavailable`, `network`, `timeout`, `invalid-reply`):
   * once per reason (a 403 or a 429 `scope_limit` once per scope), and again only after a report (on that scope)
   * has succeeded since. The client paces alone
   * (ATB) meanwhile. @default none: failures are silent
   */
  onError?: (error: TelemetryError) => void
}

/** Failures remembered as told (one per reason, or per reason and scope). */
const MAX_TOLD = 1_000

export function startClientTelemetry(
  options: ClientTelemetryOptions,
  limiter: Limiter,
  now: () => number,
  fetch: typeof globalThis.fetch,
): TelemetryDriver {
  const onError = options.onError
  // Failures already told since a report that would clear them succeeded: a wrong token fails
  // every report of every lane, and the user needs to hear it once, not once per report. A 403
  // or a 429 `scope_limit` is the scope's alone (a token not granted it, the endpoint's scope
  // cap), so it is told once per scope, and only a success on that scope clears it: the other
  // lanes' successes would otherwise have it told again every report window.
  const told = new Map<string, string | undefined>() // key → the scope it is bound to, if any
  const scopeOf = (error: TelemetryError): string | undefined =>
    error.reason === 'forbidden' || error.code === 'scope_limit' ? error.scope : undefined
  const base = createTelemetryLink({
    url: options.url,
    fetch,
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(typeof onError === 'function'
      ? {
          onFailure: (error: TelemetryError) => {
            const scope = scopeOf(error)
            const key = scope === undefined ? error.reason : `${error.reason}\u0000${scope}`
            if (told.has(key)) return
            if (told.size >= MAX_TOLD) told.clear() // bounded over a crawler's many scopes: at worst told again
            told.set(key, scope)
            onError(error)
          },
        }
      : {}),
  })
  const link: typeof base = {
    report: (report, signal) => base.report(report, signal).then((aggregate) => {
      if (aggregate !== undefined && told.size > 0) {
        for (const [key, scope] of told) if (scope === undefined || scope === report.scope) told.delete(key)
      }
      return aggregate
    }),
  }
  const driver = createTelemetryDriver({
    source: { lanes: () => limiter.lanes(), onThrottled: (listener) => limiter.on('throttled', listener) },
    link,
    now,
    ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
    ...(typeof options.tickMs === 'number' && options.tickMs > 0 ? { tickMs: options.tickMs } : {}),
  })
  driver.start()
  return driver
}
