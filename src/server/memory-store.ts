// The default store: the pure aggregator, in this process, one per tenant (tenants come
// from the configured tokens, so their number is bounded). One instance = one view; run
// several server instances against Redis instead when they must agree.
import { createAggregator } from '../telemetry/aggregator.js'
import type { Aggregator, AggregatorOptions } from '../telemetry/aggregator.js'
import type { TelemetryStore } from './telemetry-store.js'

export function createMemoryStore(options: AggregatorOptions = {}): TelemetryStore {
  const tenants = new Map<string, Aggregator>()
  const of = (tenant: string): Aggregator => {
    let aggregator = tenants.get(tenant)
    if (!aggregator) tenants.set(tenant, (aggregator = createAggregator(options)))
    return aggregator
  }
  // Reads of a tenant with no aggregator answer from this one, which is never reported to: a
  // read must not create a tenant. `?tenant=` is the caller's to choose (anyone's on an open
  // endpoint, and that path has no rate limit), and each aggregator held about 8 KiB: 100,000
  // reads of invented tenants grew the heap by 790 MiB.
  const empty = createAggregator(options)
  return {
    // Synchronous, and the origin is already a Reporter: nothing is allocated around a report.
    report: (report, now, quota, origin) => of(origin.tenant).record(report, now, quota, origin),
    read: async (tenant, scope, now, quota) => (tenants.get(tenant) ?? empty).read(scope, now, quota),
    snapshot: async (names, now, limit, quotaOf) =>
      names.flatMap((tenant) => (tenants.get(tenant)?.snapshot(now, limit, quotaOf) ?? []).map((scope) => ({ tenant, ...scope }))),
    gauges: (now) => {
      let scopes = 0
      let clients = 0
      for (const aggregator of tenants.values()) {
        aggregator.prune(now) // current at scrape time, not as of the last report
        scopes += aggregator.scopeCount()
        clients += aggregator.clientCount()
      }
      return { scopes, tracked_clients: clients }
    },
  }
}
