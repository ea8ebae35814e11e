// `--telemetry local`: the endpoint the workers share, set up for a time-compressed run.
// The aggregator's windows, the per-client report limit and the quota rate are scaled
// like everything else (see time-scale.ts), and the endpoint is told the quota the local
// server enforces: with status-only 429s no client could tell it, and AATB's fair share
// is that rate divided among the active workers.
import { createMemoryStore, DEFAULT_AGGREGATOR_OPTIONS, type TelemetryHandlerOptions } from '../../src/server/index.js'
import { DEFAULT_QUOTA } from '../../src/sim/quota-server.js'

export function localTelemetryOptions(quotaUrl: string, timeScale: number): TelemetryHandlerOptions {
  return {
    store: createMemoryStore(scaledWindows(timeScale)),
    quotas: { [new URL(quotaUrl).origin]: { perSecond: (DEFAULT_QUOTA.perMinute / 60) * timeScale } },
    rateLimit: { perClientPerSecond: 2 * timeScale, perClientBurst: 10 },
  }
}

/** The aggregator's windows divided by S, each still a whole number of its (scaled) buckets. */
function scaledWindows(timeScale: number) {
  const o = DEFAULT_AGGREGATOR_OPTIONS
  const reportBucketMs = Math.max(1, Math.round(o.reportBucketMs / timeScale))
  const activeBucketMs = Math.max(1, Math.round(o.activeBucketMs / timeScale))
  return {
    reportBucketMs,
    reportWindowMs: reportBucketMs * Math.round(o.reportWindowMs / o.reportBucketMs),
    activeBucketMs,
    activeWindowMs: activeBucketMs * Math.round(o.activeWindowMs / o.activeBucketMs),
  }
}
