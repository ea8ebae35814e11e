// The one row schema every benchmark and simulator output uses. Later outputs
// extend it (the simulator grid adds scenario, server, seeds, means, …) but never
// rename these fields.
import type { Feedback } from './types.js'

export interface ResultRow {
  /** Strategy name: `exponential` (UB), `window` (WB), `atb-paper`, `atb` (polite-fetch default), `aatb`, peers… */
  strategy: string
  feedback: Feedback
  clients: number
  requests: number
  attempts: number
  /** 429 responses seen (attempts − successes when every failure is a 429). */
  throttled: number
  /** Last success − first attempt, in ms. */
  completionMs: number
}

export function resultRow(row: ResultRow): ResultRow {
  const { strategy, feedback, clients, requests, attempts, throttled, completionMs } = row
  return { strategy, feedback, clients, requests, attempts, throttled, completionMs }
}
