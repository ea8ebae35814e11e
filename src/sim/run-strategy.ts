// What the simulator needs from a strategy for one run: the Strategy that makes each
// client's pacer, and (AATB) the fleet's telemetry, which the engine drives in the same
// virtual time as everything else.
import type { Pacer, Signal, Strategy } from '../core/types.js'
import type { QuotaConfig } from './types.js'

export interface SimTelemetry {
  /** Period of each client's routine report, from the client's start; omit for none. */
  reportIntervalMs?: number
  /** A client's routine report is due (may call `pacer.onAggregate`). */
  onTick?(client: number, now: number, pacer: Pacer): void
  /** A client saw the response to one of its attempts (after `pacer.onResult`). */
  onResult?(client: number, now: number, signal: Signal, pacer: Pacer): void
  /** Telemetry messages exchanged so far (requests to the aggregator; replies not counted). */
  messages(): number
}

export interface RunStrategy {
  strategy: Strategy
  telemetry?: SimTelemetry
}

export interface RunContext {
  /** Clients in the run (including any that have no requests). */
  clients: number
  quota: QuotaConfig
  seed: number
}

/** A named entry of the simulator's strategy registry. */
export interface SimStrategy {
  /** Registry name, as rows carry it: `exponential`, `window`, `atb-paper`, `atb`, `aatb`, peers… */
  name: string
  /** Short label for tables (`UB`, `WB`, `ATB (paper)`, …). */
  label: string
  /** Fresh per run: pacers and any telemetry aggregator must not leak state between runs. */
  setup(context: RunContext): RunStrategy
}
