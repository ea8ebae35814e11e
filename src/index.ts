// polite-fetch: a drop-in fetch that paces every attempt through an adaptive token
// bucket per quota scope. Named exports only (tree-shakable, no default export).

// The fetch client and the transport-agnostic engine behind it.
export { createClient } from './client/create-client.js'
export type { Client, PoliteFetchInit, PoliteRequestInit } from './client/create-client.js'
export type { FetchBody, FetchImplementation, FetchInput, ResponseShape } from './client/fetch-types.js'
export { createLimiter } from './client/create-limiter.js'
export type { Limiter } from './client/create-limiter.js'
export type { AttemptOutcome, Job } from './client/limiter-types.js'
export type { ClientOptions, LimiterOptions, RequestDescriptor } from './client/options.js'
export { clientDefaults, limiterDefaults } from './client/options.js'
export { PACED_HEADER, PACED_HEADER_VALUE } from './client/fetch-job.js'
export type { ScopeStats } from './client/lane.js'
export type {
  AttemptEvent,
  GiveUpEvent,
  LimiterEventName,
  LimiterEvents,
  Listener,
  RateEvent,
  RetryEvent,
  SplitEvent,
  ThrottledEvent,
} from './client/limiter-events.js'

// Errors.
export {
  ClosedError,
  DeadlineError,
  PoliteFetchError,
  QueueFullError,
  RetryAfterTooLongError,
  RetryBudgetError,
} from './client/errors.js'
export type { PoliteFetchErrorOptions } from './client/errors.js'
export type { GiveUpReason } from './core/retry-policy.js'

// Strategies (one pacer per lane).
export { atb, exponential, none, paperAtb, windowed } from './core/pacers/index.js'
// The fleet-aware strategies carry their telemetry starter (createClient imports none).
export { aatb, paperAatb } from './client/telemetry-strategies.js'
export type { TelemetryStrategy } from './client/telemetry-strategies.js'
export type { AatbOptions, AtbOptions, ExponentialOptions, PaperAatbOptions, PaperAtbOptions, WindowOptions } from './core/pacers/index.js'
export type { ClientTelemetryOptions } from './client/client-telemetry.js'
// Types only: the class stays out of a page that paces with atb() (`error.name === 'TelemetryError'`).
export type { TelemetryError, TelemetryFailureReason } from './telemetry/telemetry-error.js'

// Server signals: what a response says about the quota.
export { readSignals } from './core/signals/index.js'
export type { HeaderSource } from './core/signals/index.js'

// Time and persistence seams.
export { systemClock } from './client/system-clock.js'
export { memoryStore } from './storage/memory-store.js'
export type { MemoryStore, MemoryStoreOptions } from './storage/memory-store.js'
export type {
  Aggregate,
  Clock,
  Pacer,
  PacerInit,
  PacerState,
  QuotaPolicy,
  Random,
  Signal,
  SignalKind,
  Store,
  Strategy,
} from './core/types.js'
