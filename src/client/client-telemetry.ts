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
   * once per reason, and again only after a report has succeeded since. The client paces alone
   * (ATB) meanwhile. @default none: failures are silent
   */
  onError?: (error: TelemetryError) => void
}

export function startClientTelemetry(
  options: ClientTelemetryOptions,
  limiter: Limiter,
  now: () => number,
  fetch: typeof globalThis.fetch,
): TelemetryDriver {
  const onError = options.onError
  // Reasons already told since the last report that succeeded: a wrong token fails every report
  // of every lane, and the user needs to hear it once, not once per report.
  const told = new Set<string>()
  const base = createTelemetryLink({
    url: options.url,
    fetch,
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(typeof onError === 'function'
      ? { onFailure: (error: TelemetryError) => { if (!told.has(error.reason)) { told.add(error.reason); onError(error) } } }
      : {}),
  })
  const link: typeof base = {
    report: (report, signal) => base.report(report, signal).then((aggregate) => {
      if (aggregate !== undefined) told.clear()
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
