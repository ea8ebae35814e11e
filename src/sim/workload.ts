// Seeded arrivals for a scenario. A Poisson process conditioned on its count is a set
// of i.i.d. uniform points, so "per-client Poisson arrivals over 300 s, scaled so the
// total is N" is: split N over the clients (multinomial by their shares), then draw
// each client's arrival times uniformly over the window and sort them.
import type { Random } from '../core/types.js'
import { multinomial, paretoSample, stream } from './random.js'
import type { Scenario } from './scenarios.js'

export interface ClientWorkload {
  id: number
  /** When the client starts (ms from the run's origin): the paper's `(id * 0.5) % 10` s stagger. */
  startMs: number
  /** Arrival times in ms from the run's origin (start offset included), ascending. */
  arrivalsMs: number[]
  /** Each request's route (`POST /orders`), parallel to `arrivalsMs`; absent: one route. */
  routes?: string[]
}

export interface Workload {
  scenario: string
  clients: ClientWorkload[]
  /** Total requests (= scenario.requests). */
  requests: number
}

/**
 * Shape of the heavy tail in the real-trace stand-in: per-user shares are Pareto(α)
 * draws. α = 1.2 is the classic "80/20" web-traffic tail; see docs/results.md.
 */
export const REAL_TRACE_PARETO_ALPHA = 1.2

/** The paper harness's start stagger: client `id` sleeps `(id * 0.5) % 10` s first. */
export function startOffsetMs(id: number): number {
  return ((id * 0.5) % 10) * 1000
}

export function generateWorkload(scenario: Scenario, seed: number): Workload {
  const random = stream(seed, 'workload', scenario.name)
  const counts = scenario.family === 'real-trace'
    ? realTraceCounts(random, scenario.clients, scenario.requests)
    : multinomial(random, scenario.requests, new Array<number>(scenario.clients).fill(1))
  const clients: ClientWorkload[] = counts.map((count, id) => {
    const startMs = startOffsetMs(id)
    const arrivalsMs: number[] = []
    for (let k = 0; k < count; k++) arrivalsMs.push(startMs + Math.floor(random() * scenario.windowMs))
    arrivalsMs.sort((a, b) => a - b)
    return { id, startMs, arrivalsMs }
  })
  return { scenario: scenario.name, clients, requests: scenario.requests }
}

/** Every user sends at least one request; the rest follow heavy-tailed Pareto shares. */
function realTraceCounts(random: Random, users: number, requests: number): number[] {
  const shares: number[] = []
  for (let u = 0; u < users; u++) shares.push(paretoSample(random, REAL_TRACE_PARETO_ALPHA))
  const floor = Math.min(1, Math.floor(requests / users))
  const rest = multinomial(random, requests - floor * users, shares)
  return rest.map((n) => n + floor)
}
