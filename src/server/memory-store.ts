// The default store: the pure aggregator, in this process. One instance = one view;
// run several server instances against Redis instead when they must agree.
import { createAggregator } from '../telemetry/aggregator.js'
import type { AggregatorOptions } from '../telemetry/aggregator.js'
import type { TelemetryStore } from './telemetry-store.js'

export function createMemoryStore(options: AggregatorOptions = {}): TelemetryStore {
  const aggregator = createAggregator(options)
  return {
    report: async (report, now, quota) => aggregator.report(report, now, quota),
    read: async (scope, now, quota) => aggregator.read(scope, now, quota),
    gauges: () => ({ scopes: aggregator.scopeCount() }),
  }
}
