// The routes scenario (issue 15): an endpoint limit under a global one, as partner API
// gateways set them. 12 clients send 915 Poisson requests over 60 s, 1.5 × the 610 the
// global limit admits in that time (10 burst + 10/s × 60 s); 30% of them (about 275) are
// `POST /orders`, limited to 1/s with a burst of 2, the rest `GET /catalog`. Clients
// start together (a 60 s window has no room for the paper's 10 s stagger).
import { multinomial, stream } from '../random.js'
import { scaleQuota } from '../scale-run.js'
import { endpointLimits, type EndpointLimitedModel } from '../servers/endpoint-limits.js'
import { createServerModel } from '../servers/index.js'
import type { QuotaConfig } from '../types.js'
import type { ClientWorkload, Workload } from '../workload.js'

export interface RoutesScenario {
  name: string
  clients: number
  requests: number
  windowMs: number
  /** Share of requests on the limited route. */
  limitedShare: number
  /** Global limit (continuous token bucket). */
  global: QuotaConfig
  limited: { method: string; path: string; perSecond: number; capacity: number }
  other: { method: string; path: string }
}

export const ROUTES_SCENARIO: RoutesScenario = {
  name: 'routes-12c-915',
  clients: 12,
  requests: 915,
  windowMs: 60_000,
  limitedShare: 0.3,
  global: { capacity: 10, perMinute: 600 },
  limited: { method: 'POST', path: '/orders', perSecond: 1, capacity: 2 },
  other: { method: 'GET', path: '/catalog' },
}

export const routeName = (r: { method: string; path: string }): string => `${r.method} ${r.path}`

/** Arrivals uniform over the window per client (Poisson conditioned on the count), each on the limited route with its share. */
export function generateRoutesWorkload(scenario: RoutesScenario, seed: number): Workload {
  const random = stream(seed, 'routes-workload', scenario.name)
  const counts = multinomial(random, scenario.requests, new Array<number>(scenario.clients).fill(1))
  const limited = routeName(scenario.limited)
  const other = routeName(scenario.other)
  const clients: ClientWorkload[] = counts.map((count, id) => {
    const arrivalsMs: number[] = []
    for (let j = 0; j < count; j++) arrivalsMs.push(Math.floor(random() * scenario.windowMs))
    arrivalsMs.sort((a, b) => a - b)
    const routes = arrivalsMs.map(() => (random() < scenario.limitedShare ? limited : other))
    return { id, startMs: 0, arrivalsMs, routes }
  })
  return { scenario: scenario.name, clients, requests: scenario.requests }
}

/** The composite server at scale k (both limits refill k times slower), created full at `now`. */
export function routesServer(scenario: RoutesScenario, k: number, now: number): EndpointLimitedModel {
  const { method, path, perSecond, capacity } = scenario.limited
  return endpointLimits({
    global: createServerModel('token-bucket-continuous', scaleQuota(scenario.global, k), now),
    endpoints: [{ method, path, perSecond: perSecond / k, capacity }],
    now,
  })
}
