// polite-fetch/server: the AATB telemetry endpoint.
export { createTelemetryHandler, readLimited } from './create-telemetry-handler.js'
export type { TelemetryHandler, TelemetryHandlerInfo } from './create-telemetry-handler.js'
export { createTelemetryCore } from './handle-telemetry.js'
export type {
  QuotaRate,
  ReportRateLimit,
  TelemetryCore,
  TelemetryHandlerOptions,
  TelemetryRequest,
  TelemetryResponse,
} from './handle-telemetry.js'
export { serve } from './serve.js'
export type { RunningServer, ServeOptions } from './serve.js'
export { createMemoryStore } from './memory-store.js'
export { createRedisStore, REDIS_LAYOUT } from './redis-store.js'
export type { RedisStore, RedisStoreOptions } from './redis-store.js'
export { StoreLayoutError, StoreUnavailableError } from './telemetry-store.js'
export type { ReportOrigin, TelemetryStore, TenantScopeSnapshot } from './telemetry-store.js'
export { createAuthenticator, OPEN_TENANT, parseTokenArg } from './auth.js'
export type { AuthOptions, TenantGrant } from './auth.js'
export { createKeyedRateLimiter } from './keyed-rate-limiter.js'
export { createAggregator, DEFAULT_AGGREGATOR_OPTIONS, PAPER_AGGREGATOR_OPTIONS } from '../telemetry/aggregator.js'
export { aggregatorWindows, windowForQuota, REFILL_UNITS_PER_WINDOW } from '../telemetry/aggregator-windows.js'
export type { Aggregator, AggregatorOptions, RecordResult, Reporter, ScopeSnapshot } from '../telemetry/aggregator.js'
export { sourceKey } from './source-address.js'
export * from '../telemetry/protocol.js'
