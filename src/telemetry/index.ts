// Client-side telemetry: the wire protocol, the link and the report driver.
export * from './protocol.js'
export { createTelemetryLink } from './telemetry-link.js'
export type { LinkReport, LinkTimer, TelemetryLink, TelemetryLinkOptions } from './telemetry-link.js'
export { createTelemetryDriver } from './telemetry-driver.js'
export type { TelemetryDriver, TelemetryDriverOptions, TelemetryLane, TelemetrySource } from './telemetry-driver.js'
export { createAggregator, DEFAULT_AGGREGATOR_OPTIONS, PAPER_AGGREGATOR_OPTIONS, OVERFLOW_CLIENT_ID } from './aggregator.js'
export type { Aggregator, AggregatorOptions, RecordResult, Reporter, ScopeSnapshot } from './aggregator.js'
