// Per-endpoint limits under a global one, as partner API gateways set them (say 20 req/s
// for the whole account and 2 req/s on `POST /products`). A request to a limited
// endpoint passes only when BOTH the global model and the endpoint's model would admit
// it, and only then is it charged to both: a refusal by one must not eat quota of the
// other. The Admission reports the limiting policy, so a client can tell an endpoint
// limit (slow that route down) from the global one (slow everything down).
import type { Admission, QuotaConfig, ServerModel } from '../types.js'
import { tokenBucket } from './token-bucket.js'

export interface EndpointLimit {
  /** HTTP method, case-insensitive; `*` for any. */
  method: string
  /** Exact path (query ignored), or a prefix ending in `*` (`/products/*`). */
  path: string
  perSecond: number
  /** Burst; default max(1, perSecond). */
  capacity?: number
  /** Policy name; default `"<METHOD> <path>"`. */
  name?: string
}

export interface EndpointLimitsOptions {
  global: ServerModel
  endpoints: readonly EndpointLimit[]
  /** Builds each endpoint's model; default a continuous token bucket. */
  createModel?: (quota: QuotaConfig, policy: string) => ServerModel
  /** Creation time in ms for the default endpoint models. Default 0. */
  now?: number
}

export interface EndpointLimitedModel extends ServerModel {
  /** Offer a request to `method path`; `admit(now, cost)` alone counts against the global limit only. */
  admitRequest(now: number, cost: number, method: string, path: string): Admission
  nextAdmitAtFor(now: number, cost: number, method: string, path: string): number
  /** Policy name of the endpoint limit that applies to `method path`, if any. */
  endpointOf(method: string, path: string): string | undefined
}

interface Route {
  method: string
  path: string
  prefix: boolean
  name: string
  model: ServerModel
}

export function endpointLimitName(limit: Pick<EndpointLimit, 'method' | 'path' | 'name'>): string {
  return limit.name ?? `${limit.method.toUpperCase()} ${limit.path}`
}

export function endpointLimits(options: EndpointLimitsOptions): EndpointLimitedModel {
  const { global } = options
  const create =
    options.createModel ?? ((quota: QuotaConfig, policy: string) => tokenBucket({ ...quota, policy, now: options.now ?? 0 }))
  const routes: Route[] = options.endpoints.map((limit) => {
    const name = endpointLimitName(limit)
    const capacity = limit.capacity ?? Math.max(1, limit.perSecond)
    const prefix = limit.path.endsWith('*')
    return {
      method: limit.method.toUpperCase(),
      path: prefix ? limit.path.slice(0, -1) : limit.path,
      prefix,
      name,
      model: create({ capacity, perMinute: limit.perSecond * 60 }, name),
    }
  })

  const match = (method: string, path: string): Route | undefined => {
    const q = path.indexOf('?')
    const bare = q === -1 ? path : path.slice(0, q)
    const verb = method.toUpperCase()
    for (const route of routes) {
      if (route.method !== '*' && route.method !== verb) continue
      if (route.prefix ? bare.startsWith(route.path) : bare === route.path) return route
    }
    return undefined
  }

  return {
    name: global.name,
    admit: (now, cost) => global.admit(now, cost),
    nextAdmitAt: (now, cost) => global.nextAdmitAt(now, cost),
    endpointOf: (method, path) => match(method, path)?.name,
    nextAdmitAtFor(now, cost, method, path) {
      const route = match(method, path)
      const globalAt = global.nextAdmitAt(now, cost)
      return route ? Math.max(globalAt, route.model.nextAdmitAt(now, cost)) : globalAt
    },
    admitRequest(now, cost, method, path) {
      const route = match(method, path)
      if (!route) return global.admit(now, cost)
      const globalAt = global.nextAdmitAt(now, cost)
      const routeAt = route.model.nextAdmitAt(now, cost)
      if (globalAt <= now && routeAt <= now) {
        const a = global.admit(now, cost)
        const b = route.model.admit(now, cost)
        // Report the tighter of the two; ties go to the endpoint, the more specific limit.
        return a.remaining < b.remaining ? a : b
      }
      // Ask the limiting model for its own figures; a refusal changes no model's state.
      const refusal = (routeAt >= globalAt ? route.model : global).admit(now, cost)
      refusal.retryAfterMs = Math.max(globalAt, routeAt) - now
      return refusal
    },
  }
}
