// What the simulator needs from a strategy for one run: the Strategy that makes each
// client's pacer, and (AATB) the in-process telemetry aggregator the fleet reports to.
// The engine drives reporting in virtual time the way the SDK's telemetry driver does
// in real time: it sends `pacer.takeReport()` when `pacer.reportDueAt()` is reached
// (right after a 429, or every report window) and hands the reply to `onAggregate`.
import type { Strategy } from '../core/types.js'
import type { Aggregator } from '../telemetry/aggregator.js'
import type { QuotaConfig } from './types.js'

export interface SimTelemetry {
  /** A fresh aggregator for the run (the same code the telemetry server runs). */
  aggregator: Pick<Aggregator, 'report'>
  /** Quota rate the aggregator's operator configured (the paper's `token_rate`), units/s. */
  configuredQuotaPerSecond?: number
  /** Scope every client reports under. Default `sim`. */
  scope?: string
  /** Time from a report to its reply. Default: the run's RTT. */
  replyDelayMs?: number
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
