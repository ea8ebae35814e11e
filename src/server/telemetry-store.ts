// What the telemetry handler needs from a store. Two implementations with the same
// semantics: the in-process aggregator (memory-store.ts) and Redis (redis-store.ts).
import type { TelemetryReply, TelemetryReport } from '../telemetry/protocol.js'

export interface TelemetryStore {
  /** Record a validated report at `now`; resolve the aggregate as the reporter sees it. */
  report(report: TelemetryReport, now: number, configuredQuotaPerSecond?: number): Promise<TelemetryReply>
  /** Read-only aggregate of `scope` at `now` (fair share of a client of weight 1). */
  read(scope: string, now: number, configuredQuotaPerSecond?: number): Promise<TelemetryReply>
  /** Gauges for `/metrics` (e.g. `scopes`). */
  gauges?(): Record<string, number>
  close?(): Promise<void>
}

/** Thrown (rejected) by a store whose backend is unreachable; the handler answers 503. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
