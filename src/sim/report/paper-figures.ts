// The paper's published relative figures (algorithms.md §6.4, from the research ledger:
// status-only 429s from an Envoy token bucket of 100, 80/min; ≥ 30 runs; vs UB).
// `ours` names the registry strategy that re-implements the paper's method.

export interface PaperFigure {
  scenario: string
  /** The paper's name for the method. */
  method: 'WB' | 'ATB' | 'AATB'
  /** Registry strategy that re-implements it. */
  ours: string
  throttledVsUbPct: number
  completionVsUbPct: number
  telemetryMessages?: number
}

export const PAPER_FIGURES: readonly PaperFigure[] = [
  { scenario: 'real-trace-800', method: 'WB', ours: 'window', throttledVsUbPct: -62.7, completionVsUbPct: 25.45 },
  { scenario: 'real-trace-800', method: 'ATB', ours: 'atb-paper', throttledVsUbPct: -70.13, completionVsUbPct: 21.26 },
  { scenario: 'real-trace-800', method: 'AATB', ours: 'aatb-paper', throttledVsUbPct: -93.23, completionVsUbPct: 27.62, telemetryMessages: 276.25 },
  { scenario: 'synthetic-5c-500', method: 'AATB', ours: 'aatb-paper', throttledVsUbPct: -96.9, completionVsUbPct: 13.3 },
  { scenario: 'synthetic-5c-800', method: 'AATB', ours: 'aatb-paper', throttledVsUbPct: -97.3, completionVsUbPct: 19.8 },
  { scenario: 'synthetic-100c-500', method: 'ATB', ours: 'atb-paper', throttledVsUbPct: -91.5, completionVsUbPct: 24.3 },
  { scenario: 'synthetic-100c-500', method: 'AATB', ours: 'aatb-paper', throttledVsUbPct: -77.8, completionVsUbPct: 26.4 },
  { scenario: 'synthetic-100c-800', method: 'ATB', ours: 'atb-paper', throttledVsUbPct: -90.5, completionVsUbPct: 23.1 },
  { scenario: 'synthetic-100c-800', method: 'AATB', ours: 'aatb-paper', throttledVsUbPct: -91.7, completionVsUbPct: 11.7 },
]
