// --telemetry URL: the workers coordinate through the telemetry endpoint (AATB). Each
// worker paces with AATB; the interceptor reports its lanes' attempts and 429s to the
// endpoint and hands the fleet's aggregate back to the pacers. Telemetry is advisory:
// when the endpoint is down the workers simply run ATB.
import { aatb } from '../../src/core/pacers/aatb.js'
import { AATB_DEFAULTS } from '../../src/core/pacers/aatb-options.js'
import type { InstallOptions } from '../../src/node/index.js'
import { timeScaled, timeScaledAtbOptions } from './time-scale.js'

/** AATB with its time constants compressed like the quota server's (see time-scale.ts). */
export function aatbWithTelemetry(url: string, timeScale: number, clientId: string): InstallOptions {
  const { atb: _inner, ...rest } = AATB_DEFAULTS
  return {
    strategy: aatb({ ...timeScaled(rest, timeScale), atb: timeScaledAtbOptions(timeScale) }),
    // The driver looks for due reports once a (scaled) second.
    telemetry: { url, clientId, tickMs: 1_000 / timeScale },
  }
}
