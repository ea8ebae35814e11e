// The fleet-aware strategies as the fetch client takes them: the pure pacer plus the way
// to start its telemetry (report, read the aggregate). The starter travels on the
// strategy, so `createClient` imports no telemetry code: a page that paces with the
// default atb() ships none of it, and only a page that imports aatb() carries it.
import { aatb as pureAatb, paperAatb as purePaperAatb, type AatbOptions, type PaperAatbOptions } from '../core/pacers/index.js'
import type { Strategy } from '../core/types.js'
import { startClientTelemetry } from './client-telemetry.js'

/** A strategy that can take part in a fleet through `createClient({ telemetry })`. */
export interface TelemetryStrategy extends Strategy {
  readonly startTelemetry: typeof startClientTelemetry
}

function withTelemetry(strategy: Strategy): TelemetryStrategy {
  return Object.assign(strategy, { startTelemetry: startClientTelemetry })
}

/** AATB: ATB plus the fleet's aggregate from the telemetry endpoint (`createClient({ strategy: aatb(), telemetry })`). */
export function aatb(options?: AatbOptions): TelemetryStrategy {
  return withTelemetry(pureAatb(options))
}

/** The paper's AATB, with telemetry. */
export function paperAatb(options?: PaperAatbOptions): TelemetryStrategy {
  return withTelemetry(purePaperAatb(options))
}
