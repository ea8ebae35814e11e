// Learning a route split from status codes alone, end to end: the real local quota
// server (a global limit plus 2/s on POST /products) and the real client, both on one
// virtual clock, so seconds of traffic take a fraction of a second. Each 50 ms tick
// sends that tick's requests and waits (bounded) for every response before time moves.
import { afterEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import type { SplitEvent } from '../../src/client/limiter-events.js'
import { startQuotaServer, type QuotaServer, type QuotaServerOptions } from '../../src/sim/quota-server.js'
import { ManualClock } from '../helpers/manual-clock.js'

const TICK_MS = 50

let server: QuotaServer | undefined
let client: Client | undefined

afterEach(async () => {
  await client?.close()
  await server?.close()
  client = undefined
  server = undefined
})

interface Run {
  splits: SplitEvent[]
  /** Virtual ms (from the start) of the first split. */
  splitAt: number | undefined
  /** Routes (method + path) that saw a 429. */
  throttledRoutes: Set<string>
  /** Virtual ms and lane of each 429. */
  throttles: { at: number; scope: string }[]
  /** Virtual ms (from the start) and waitedMs of each GET /items attempt. */
  gets: { at: number; waitedMs: number; scope: string }[]
  postScopes: Set<string>
  client: Client
  origin: string
}

async function settled(c: Client): Promise<void> {
  // Real network round trips on 127.0.0.1: bounded wait for every attempt in flight.
  for (let i = 0; i < 2_000; i++) {
    if (c.stats().every((s) => s.inFlight === 0)) return
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  throw new Error('responses did not arrive')
}

async function drive(
  serverOptions: QuotaServerOptions,
  learnRouteSplits: boolean,
  seconds: number,
  perTick: { get: number; post: number; firstPosts?: number },
): Promise<Run> {
  const clock = new ManualClock()
  const start = clock.now()
  server = await startQuotaServer({ clock: () => clock.now(), ...serverOptions })
  const c = (client = createClient({ clock, learnRouteSplits, random: () => 0.5 }))
  const run: Run = {
    splits: [],
    splitAt: undefined,
    throttledRoutes: new Set(),
    throttles: [],
    gets: [],
    postScopes: new Set(),
    client: c,
    origin: server.url,
  }
  c.on('split', (event) => {
    run.splits.push(event)
    run.splitAt ??= clock.now() - start
  })
  c.on('throttled', (event) => {
    const [method, url] = (event.label ?? '').split(' ')
    run.throttledRoutes.add(`${method} ${new URL(url!).pathname}`)
    run.throttles.push({ at: clock.now() - start, scope: event.scope })
  })
  c.on('attempt', (event) => {
    if (event.label?.startsWith('GET')) run.gets.push({ at: clock.now() - start, waitedMs: event.waitedMs, scope: event.scope })
    else run.postScopes.add(event.scope)
  })
  const send = (path: string, init: RequestInit): void => {
    void c.fetch(`${server!.url}${path}`, init).then(
      (response) => response.arrayBuffer(),
      () => undefined, // calls still queued when the client closes: the run only measures
    )
  }
  for (let tick = 0; tick < (seconds * 1000) / TICK_MS; tick++) {
    for (let i = 0; i < perTick.get; i++) send('/items', {})
    for (let i = 0; i < (tick === 0 ? (perTick.firstPosts ?? perTick.post) : perTick.post); i++) {
      send('/products', { method: 'POST', body: '{}' })
    }
    await settled(c)
    await clock.advance(TICK_MS)
  }
  await settled(c)
  return run
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? NaN
}

const ENDPOINT_LIMITED: QuotaServerOptions = {
  // 1000/s for the account: not reached even by the backlog the shared lane's pacing built up.
  quota: { capacity: 1_000, perMinute: 60_000 },
  endpoints: [{ method: 'POST', path: '/products', perSecond: 2 }],
}

const BURST = { get: 1, post: 1, firstPosts: 6 } // 20 GET/s and 20 POST/s offered, 6 POSTs at once to start

describe('createClient: learning route splits from status codes', () => {
  it('moves a route refused by its own limit to its own lane, and the others stop paying for it', async () => {
    const run = await drive(ENDPOINT_LIMITED, true, 10, BURST)
    const origin = run.origin
    const after = run.gets.filter((g) => g.at - g.waitedMs > run.splitAt!)
    expect(run.splits).toHaveLength(1)
    expect(run.splits[0]).toMatchObject({
      scope: origin,
      splitScope: `${origin}#~route:POST /products`,
      route: 'POST /products',
      policy: '~route:POST /products',
    })
    expect(run.splits[0]!.throttled).toBeGreaterThanOrEqual(1)
    expect(run.throttledRoutes).toEqual(new Set(['POST /products']))
    const stats = new Map(run.client.stats().map((s) => [s.scope, s]))
    expect([...stats.keys()].sort()).toEqual([origin, `${origin}#~route:POST /products`])
    // The origin's lane paces above the 20 GET/s offered and has not seen a 429 since.
    expect(stats.get(origin)!.gateUntil).toBe(0)
    expect(stats.get(origin)!.ratePerSecond).toBeGreaterThan(20)
    expect(run.throttles.filter((t) => t.scope === origin && t.at > run.splitAt!)).toEqual([])
    // Later POSTs went to their own lane, which kept the pace the 429s had taught.
    expect(run.postScopes).toContain(`${origin}#~route:POST /products`)
    expect(stats.get(`${origin}#~route:POST /products`)!.ratePerSecond).toBeLessThan(5)
    // Every GET /items after the split stayed in the origin's lane, and the backlog the POSTs'
    // 429s had built there drained: the last ones went out at once.
    expect(after.length).toBeGreaterThan(40)
    expect(after.every((g) => g.scope === origin)).toBe(true)
    expect(after.slice(-20).every((g) => g.waitedMs === 0)).toBe(true)
    // 200 GETs offered over 10 s, every one sent.
    expect(run.gets).toHaveLength(200)
  })

  it('control: without learnRouteSplits, GET /items keeps paying for POST /products', async () => {
    const run = await drive(ENDPOINT_LIMITED, false, 10, BURST)
    expect(run.splits).toEqual([])
    const stats = run.client.stats()
    expect(stats.map((s) => s.scope)).toEqual([run.origin])
    expect(stats[0]!.ratePerSecond).toBeLessThan(Infinity)
    // 200 GETs offered in 10 s; the shared lane let through far fewer, each after a long wait.
    expect(run.gets.length).toBeLessThan(100)
    expect(median(run.gets.map((g) => g.waitedMs))).toBeGreaterThan(1_000)
  })

  it('under a shared quota that throttles every route, a route put on trial still waits on its origin\'s pacing', async () => {
    const run = await drive({ quota: { capacity: 5, perMinute: 600 } }, true, 10, { get: 2, post: 2, firstPosts: 6 })
    expect(run.throttledRoutes).toEqual(new Set(['GET /items', 'POST /products']))
    expect(run.splits.length).toBeLessThanOrEqual(1)
    const stats = new Map(run.client.stats().map((s) => [s.scope, s]))
    const trial = stats.get(`${run.origin}#~route:POST /products`) ?? stats.get(`${run.origin}#~route:GET /items`)
    // The route's lane is sent only when the origin's pacer would send too: the shared quota's pace holds.
    if (trial !== undefined) expect(trial.ratePerSecond).toBeLessThanOrEqual(stats.get(run.origin)!.ratePerSecond)
    expect(stats.get(run.origin)!.ratePerSecond).toBeLessThan(Infinity)
  })

  it('rejects a learnRouteSplits that is not a boolean', () => {
    expect(() => createClient({ learnRouteSplits: 'yes' as unknown as boolean })).toThrow(/learnRouteSplits/)
  })
})
