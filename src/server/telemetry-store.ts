// What the telemetry handler needs from a store. Two implementations with the same
// semantics: the in-process aggregator (memory-store.ts) and Redis (redis-store.ts).
// Aggregates are kept per tenant: a tenant's scopes, and the bounds on them, are its own.
import type { RecordResult, ScopeSnapshot } from '../telemetry/aggregator.js'
import type { TelemetryReply, TelemetryReport } from '../telemetry/protocol.js'

/** Who sent a report, as the handler established it. */
export interface ReportOrigin {
  /** The token's tenant (`open` without auth): the namespace of the report's scope. */
  tenant: string
  /** The caller's source address (keys every per-source bound). */
  source: string
  /** A trusted token: not bounded per source; its quota hints are taken as given. */
  trusted: boolean
}

/** A scope on the operator's dashboard, with its tenant. */
export interface TenantScopeSnapshot extends ScopeSnapshot {
  tenant: string
}

export interface TelemetryStore {
  /**
   * Record a validated report at `now`: counted (or a duplicate) with the aggregate, or refused.
   * A store in this process may answer at once (no promise: one report is one await fewer).
   */
  report(report: TelemetryReport, now: number, configuredQuotaPerSecond: number | undefined, origin: ReportOrigin): RecordResult | Promise<RecordResult>
  /** Read-only aggregate of a tenant's `scope` at `now` (fair share of an untracked client of weight 1). */
  read(tenant: string, scope: string, now: number, configuredQuotaPerSecond?: number): Promise<TelemetryReply>
  /** The most recently reported scopes of the given tenants (at most `limit` each), for the dashboard. */
  snapshot?(tenants: readonly string[], now: number, limit: number, quotaOf: (scope: string) => number | undefined): Promise<TenantScopeSnapshot[]>
  /** Gauges for `/metrics`, current at `now` (e.g. `scopes`). */
  gauges?(now: number, tenants?: readonly string[]): Record<string, number> | Promise<Record<string, number>>
  /**
   * Resolves once the store can serve; rejects with StoreLayoutError when it never will (its
   * backend holds another version's layout). `serve` awaits it before listening. A backend that
   * is only unreachable rejects with StoreUnavailableError, which `serve` starts through.
   */
  ready?(): Promise<void>
  close?(): Promise<void>
}

/** Thrown (rejected) by a store whose backend is unreachable; the handler answers 503. */
export class StoreUnavailableError extends Error {
  override readonly name: string = 'StoreUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The backend holds keys of another layout (another version of the store). Sharing it would
 * corrupt both versions' aggregates, so the store refuses every call; the message names the key.
 * A StoreUnavailableError, so a running handler answers 503 and clients pace locally.
 */
export class StoreLayoutError extends StoreUnavailableError {
  override readonly name = 'StoreLayoutError'
}
