import type { SimRow } from '../../../src/sim/sim-row.js'

/** A SimRow with plausible defaults; override what a test is about. */
export function row(overrides: Partial<SimRow>): SimRow {
  const base: SimRow = {
    scenario: 'real-trace-800', family: 'real-trace', scale: 1, server: 'token-bucket-continuous', clientModel: 'paper',
    clients: 27, requests: 800, strategy: 'atb', feedback: 'status-only', seeds: 30,
    attempts: 900, attemptsCi95: 5, throttled: 100, completionMs: 330_000,
    throttledMean: 100, throttledCi95: 4, completionMsMean: 330_000, completionMsCi95: 2000,
    ubThrottledMean: 1000, ubCompletionMsMean: 300_000, throttledVsUbPct: -90, completionVsUbPct: 10,
    oracleCompletionMsMean: 298_000, oracleRatio: 1.107, oracleRatioCi95: 0.01,
    meanResponseMsMean: 20_000, responseP50MsMean: 10_000, responseP95MsMean: 60_000, responseP99MsMean: 90_000,
    fairnessMean: 0.8, telemetryMessagesMean: 0, incompleteRuns: 0,
  }
  const merged = { ...base, ...overrides }
  merged.throttled = merged.throttledMean
  merged.completionMs = merged.completionMsMean
  return merged
}
