// --telemetry URL: the workers coordinate through the telemetry endpoint (AATB). Each
// worker paces with AATB; the interceptor reports its lanes' attempts and 429s to the
// endpoint and hands the fleet's aggregate back to the pacers. Telemetry is advisory:
// when the endpoint is down the workers simply run ATB.
import { aatb } from '../../src/core/pacers/aatb.js'
import type { InstallOptions } from '../../src/node/index.js'

/** The default AATB with a telemetry link. */
export function aatbWithTelemetry(url: string, clientId: string): InstallOptions {
  return { strategy: aatb(), telemetry: { url, clientId } }
}
