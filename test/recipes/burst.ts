// The scenario of the recipes' acceptance: `count` calls at once through a recipe against
// its vendor's mock (3 per 1 s), and what the server and the app saw.
import { type Recipe } from './recipes.js'
import type { VendorMock, VendorRequest } from './vendor-mock.js'

export interface BurstResult {
  succeeded: number
  failed: unknown[]
  /** 429s the server sent. */
  throttled: number
  /** 429s sent to the first burst (the requests before the first success after a 429... i.e. within the first window). */
  firstBurstThrottled: number
  requests: number
  durationMs: number
  /** Calls whose attempts reached the server with differing bodies (must be none). */
  changedBodies: string[]
  /** Requests an SDK sent as its own retry (x-stainless-retry-count > 0). */
  sdkRetries: number
  /** Whether each call got back what it sent (its id echoed). */
  echoed: boolean
}

function idOf(request: VendorRequest): string {
  try {
    const json = JSON.parse(request.body.toString('utf8')) as { messages?: { content: string }[]; echo?: string; title?: string }
    return json.messages?.[0]?.content ?? json.echo ?? json.title ?? ''
  } catch {
    return ''
  }
}

export async function burst(recipe: Recipe, server: VendorMock, count = 12, streaming = false): Promise<BurstResult> {
  const ids = Array.from({ length: count }, (_, i) => `call-${i}`)
  const started = performance.now()
  const settled = await Promise.allSettled(ids.map((id) => (streaming ? recipe.stream!(id) : recipe.call(id))))
  const durationMs = performance.now() - started
  const byId = new Map<string, Buffer[]>()
  for (const request of server.requests) {
    const id = idOf(request)
    byId.set(id, [...(byId.get(id) ?? []), request.body])
  }
  const changedBodies = [...byId].filter(([, bodies]) => bodies.some((b) => !b.equals(bodies[0]!))).map(([id]) => id)
  const firstWindowEnd = (server.requests[0]?.atMs ?? 0) + 1_000
  return {
    succeeded: settled.filter((s) => s.status === 'fulfilled').length,
    failed: settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => s.reason),
    throttled: server.throttled(),
    firstBurstThrottled: server.requests.filter((r) => r.status === 429 && r.atMs < firstWindowEnd).length,
    requests: server.requests.length,
    durationMs,
    changedBodies,
    sdkRetries: server.requests.filter((r) => Number(r.headers['x-stainless-retry-count'] ?? 0) > 0).length,
    echoed: settled.every((s, i) => s.status === 'fulfilled' && s.value === ids[i]),
  }
}
