// The paper's evaluation scenarios (algorithms.md §6.2): synthetic 5 and 100 clients and
// a real-trace-like stand-in with 18/22/23/25/27 users, at 400…800 requests in 300 s.

export type ScenarioFamily = 'synthetic' | 'real-trace'

export interface Scenario {
  /** e.g. `synthetic-5c-500`, `real-trace-800`. */
  name: string
  family: ScenarioFamily
  clients: number
  requests: number
  /** Window the arrivals are spread over (each client's own clock). */
  windowMs: number
}

export const PAPER_WINDOW_MS = 300_000
export const PAPER_SIZES: readonly number[] = [400, 500, 600, 700, 800]
/** Users in the paper's real-trace scenarios, by request count. */
export const REAL_TRACE_USERS: Readonly<Record<number, number>> = { 400: 18, 500: 22, 600: 23, 700: 25, 800: 27 }

export function syntheticScenario(clients: number, requests: number, windowMs = PAPER_WINDOW_MS): Scenario {
  return { name: `synthetic-${clients}c-${requests}`, family: 'synthetic', clients, requests, windowMs }
}

export function realTraceScenario(requests: number, users?: number, windowMs = PAPER_WINDOW_MS): Scenario {
  const clients = users ?? REAL_TRACE_USERS[requests] ?? Math.max(1, Math.round(requests / 30))
  return { name: `real-trace-${requests}`, family: 'real-trace', clients, requests, windowMs }
}

export const PAPER_SCENARIOS: readonly Scenario[] = [
  ...PAPER_SIZES.map((n) => realTraceScenario(n)),
  ...PAPER_SIZES.map((n) => syntheticScenario(5, n)),
  ...PAPER_SIZES.map((n) => syntheticScenario(100, n)),
]

/** A paper scenario by name, or a custom `synthetic-<clients>c-<requests>` / `real-trace-<requests>[-<users>u]`. */
export function scenarioByName(name: string): Scenario | undefined {
  const known = PAPER_SCENARIOS.find((s) => s.name === name)
  if (known) return known
  const synthetic = /^synthetic-(\d+)c-(\d+)$/.exec(name)
  if (synthetic) return syntheticScenario(Number(synthetic[1]), Number(synthetic[2]))
  const trace = /^real-trace-(\d+)(?:-(\d+)u)?$/.exec(name)
  if (trace) {
    const scenario = realTraceScenario(Number(trace[1]), trace[2] ? Number(trace[2]) : undefined)
    return { ...scenario, name }
  }
  return undefined
}
