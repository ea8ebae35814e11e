// --telemetry URL: the workers coordinate through the telemetry endpoint (AATB). Each
// worker paces with AATB; the interceptor reports its lanes' attempts and 429s to the
// endpoint and hands the fleet's aggregate back to the pacers. Telemetry is advisory:
// when the endpoint is down the workers simply run ATB.
import { aatb } from '../../src/core/pacers/aatb.js'
import { AATB_DEFAULTS } from '../../src/core/pacers/aatb-options.js'
import type { InstallOptions } from '../../src/node/index.js'
import { timeScaledAtbOptions } from './time-scale.js'

/** AATB with its time constants compressed like the quota server's (see time-scale.ts). */
export function aatbWithTelemetry(url: string, timeScale: number, clientId: string): InstallOptions {
  const d = AATB_DEFAULTS
  const s = timeScale
  return {
    strategy: aatb({
      atb: timeScaledAtbOptions(s),
      reportWindowMs: d.reportWindowMs / s,
      throttleReportIntervalMs: d.throttleReportIntervalMs / s,
      idleAfterMs: d.idleAfterMs / s,
      aggregateTtlMs: d.aggregateTtlMs / s,
      congestionHoldMs: d.congestionHoldMs / s,
      maxAggregatePauseMs: d.maxAggregatePauseMs / s,
      confirmWindowMs: d.confirmWindowMs / s,
      maxConfirmedPauseMs: d.maxConfirmedPauseMs / s,
    }),
    telemetry: { url, clientId },
  }
}
