// `--telemetry local`: the endpoint the workers share, with the shipped defaults. It is told
// the quota the local server enforces (in wall time: 80/min × the server's time scale): with
// status-only 429s no client could tell it, and AATB's fair share is that rate divided among
// the active workers.
import type { TelemetryHandlerOptions } from '../../src/server/index.js'
import { DEFAULT_QUOTA } from '../../src/sim/quota-server.js'

export function localTelemetryOptions(quotaUrl: string, timeScale: number): TelemetryHandlerOptions {
  return { quotas: { [new URL(quotaUrl).origin]: { perSecond: (DEFAULT_QUOTA.perMinute / 60) * timeScale } } }
}
