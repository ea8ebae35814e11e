// Why a report came back without an aggregate, for whoever wants to know. Telemetry still
// fails open (the lane paces alone, as ATB); this only names the failure, so a wrong token
// or a misrouted URL is not silent for the life of the client.

/**
 * `unauthorized` 401 (a wrong or missing token), `forbidden` 403 (the token may not report on
 * the scope), `rate-limited` 429, `rejected` any other non-2xx below 500, `unavailable` 5xx,
 * `network` no answer (refused, reset, DNS), `timeout` no reply within `timeoutMs`,
 * `invalid-reply` a 2xx that is not a valid aggregate for the scope.
 */
export type TelemetryFailureReason =
  | 'unauthorized'
  | 'forbidden'
  | 'rate-limited'
  | 'rejected'
  | 'unavailable'
  | 'network'
  | 'timeout'
  | 'invalid-reply'

export class TelemetryError extends Error {
  override readonly name = 'TelemetryError'
  constructor(
    readonly reason: TelemetryFailureReason,
    /** The endpoint's HTTP status; 0 when it gave none. */
    readonly status: number,
    /** The lane's scope the report was for (as the limiter names it; the wire's may be percent-encoded). */
    readonly scope: string,
    message: string,
    /** The endpoint's error code, when it said one (`unauthorized`, `scope_forbidden`, `rate_limited`, `scope_limit`, …). */
    readonly code?: string,
  ) {
    super(message)
  }
}

/** The reason a non-2xx status stands for. */
export function failureReasonOf(status: number): TelemetryFailureReason {
  if (status === 401) return 'unauthorized'
  if (status === 403) return 'forbidden'
  if (status === 429) return 'rate-limited'
  return status >= 500 ? 'unavailable' : 'rejected'
}
