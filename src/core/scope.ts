// Which lane (quota scope) a request belongs to. By default one lane per origin; once
// a server names the policy or bucket a route draws on (RateLimit-Policy item names,
// X-RateLimit-Bucket, X-RateLimit-Resource, surfaced as `signal.policy`), later requests
// of that route use the lane `origin#policy`, so a 429 on `POST /products` (an endpoint
// limit) does not stall `GET /items`. Routes are remembered in a bounded map.
// Pure: plain strings in, plain strings out, no time, no I/O.

/** Policy names longer than this are ignored: they would only bloat lane keys. */
export const MAX_POLICY_NAME_LENGTH = 64

/** `origin#policy`, the lane of requests that draw on a named policy. */
export function policyScope(origin: string, policy: string): string {
  return `${origin}#${policy}`
}

// Segments that identify a resource rather than name a route: numbers, UUIDs, long
// hex (object ids, hashes) and long tokens with digits in them.
const ID_SEGMENT = /^(?:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|(?=[^/]*\d)[\w.~-]{20,})$/i

/** `/users/42/orders/9f1c…` → `/users/:id/orders/:id`, so one learned route covers every resource. */
export function pathTemplate(pathname: string): string {
  if (!/\d/.test(pathname)) return pathname
  return pathname
    .split('/')
    .map((segment) => (ID_SEGMENT.test(segment) ? ':id' : segment))
    .join('/')
}

/** Method + origin + path template: the unit a learned policy applies to. */
export function routeKey(method: string, origin: string, pathname: string): string {
  return `${method.toUpperCase()} ${origin}${pathTemplate(pathname)}`
}

/** Remembers route → policy (least recently learned dropped first beyond `maxRoutes`). */
export class RouteScopes {
  readonly #maxRoutes: number
  readonly #policies = new Map<string, string>()

  constructor(maxRoutes = 1_000) {
    this.#maxRoutes = Math.max(1, Math.floor(maxRoutes))
  }

  get size(): number {
    return this.#policies.size
  }

  /** The lane for a request: `origin#policy` when its route's policy is known, else `origin`. */
  scopeFor(method: string, origin: string, pathname: string): string {
    if (this.#policies.size === 0) return origin
    const policy = this.#policies.get(routeKey(method, origin, pathname))
    return policy === undefined ? origin : policyScope(origin, policy)
  }

  /** A response of this route named `policy`: route later requests to its lane. */
  learn(method: string, origin: string, pathname: string, policy: string | undefined): void {
    if (typeof policy !== 'string' || policy.length === 0 || policy.length > MAX_POLICY_NAME_LENGTH) return
    const key = routeKey(method, origin, pathname)
    if (this.#policies.get(key) === policy) return
    this.#policies.delete(key)
    this.#policies.set(key, policy)
    if (this.#policies.size > this.#maxRoutes) {
      const oldest = this.#policies.keys().next().value as string
      this.#policies.delete(oldest)
    }
  }
}
