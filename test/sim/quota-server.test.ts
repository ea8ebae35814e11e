import { afterEach, describe, expect, it } from 'vitest'
import { startQuotaServer, type QuotaServer, type QuotaServerOptions } from '../../src/sim/quota-server.js'

const T0 = 1_700_000_000_000 // Tue, 14 Nov 2023 22:13:20 GMT

let server: QuotaServer | undefined
let now = T0

async function start(options: QuotaServerOptions = {}): Promise<QuotaServer> {
  now = T0
  server = await startQuotaServer({ clock: () => now, ...options })
  return server
}

afterEach(async () => {
  await server?.close()
  server = undefined
})

async function hit(path = '/compute', init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${server!.url}${path}`, init)
  await response.arrayBuffer()
  return response
}

async function statuses(n: number, path = '/compute', init: RequestInit = {}): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push((await hit(path, init)).status)
  return out
}

describe('startQuotaServer', () => {
  it('listens on 127.0.0.1 and answers 429 once the paper bucket (100, 80/min) is empty', async () => {
    const s = await start()
    expect(s.url).toBe(`http://127.0.0.1:${s.port}`)
    const init = { method: 'POST', body: '{"num1":9,"num2":9}' }
    const codes = await Promise.all(Array.from({ length: 101 }, async () => (await hit('/compute', init)).status))
    expect(codes.filter((c) => c === 200)).toHaveLength(100)
    expect(codes.filter((c) => c === 429)).toHaveLength(1)
    const refused = await hit()
    expect(refused.headers.get('retry-after')).toBeNull() // status-only by default
    expect(refused.headers.get('ratelimit')).toBeNull()
    now += 749
    expect((await hit()).status).toBe(429)
    now += 1
    expect((await hit()).status).toBe(200)
  })

  it('answers with a small JSON body', async () => {
    await start({ quota: { capacity: 1, perMinute: 60 } })
    const ok = await fetch(`${server!.url}/x`)
    expect(ok.headers.get('content-type')).toBe('application/json')
    expect(await ok.json()).toEqual({ ok: true })
    const no = await fetch(`${server!.url}/x`)
    expect(no.status).toBe(429)
    expect(await no.json()).toEqual({ error: 'too many requests' })
  })

  it('renders each feedback mode, chosen by option, query or x-feedback header', async () => {
    await start({ quota: { capacity: 2, perMinute: 60 }, feedback: 'retry-after' })
    const first = await hit('/a')
    expect(first.headers.get('retry-after')).toBeNull()
    const second = await hit('/a?feedback=ratelimit')
    expect(second.headers.get('ratelimit-policy')).toBe('"global";q=2;w=2')
    expect(second.headers.get('ratelimit')).toBe('"global";r=0;t=2')
    const third = await hit('/a')
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).toBe('1')
    expect(third.headers.get('ratelimit')).toBeNull()
    const fourth = await hit('/a', { headers: { 'x-feedback': 'x-ratelimit' } })
    expect(fourth.status).toBe(429)
    expect(fourth.headers.get('x-ratelimit-limit')).toBe('2')
    expect(fourth.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(fourth.headers.get('x-ratelimit-reset')).toBe(String(T0 / 1000 + 2))
    expect(fourth.headers.get('date')).toBe('Tue, 14 Nov 2023 22:13:20 GMT')
    expect(fourth.headers.get('retry-after')).toBe('1')
    const fifth = await hit('/a?feedback=retry-after-ms')
    expect(fifth.status).toBe(429)
    expect(fifth.headers.get('retry-after')).toBe('1')
    expect(Number(fifth.headers.get('retry-after-ms'))).toBeGreaterThan(0)
    expect(Number(fifth.headers.get('retry-after-ms'))).toBeLessThanOrEqual(1000)
    const bogus = await hit('/a?xfeedback=ratelimit&feedback=nonsense')
    expect(bogus.headers.get('ratelimit')).toBeNull()
    expect(bogus.headers.get('retry-after')).toBe('1')
  })

  it('enforces endpoint limits under the global one and names the limiting policy', async () => {
    await start({
      quota: { capacity: 20, perMinute: 1200 },
      feedback: 'ratelimit',
      endpoints: [{ method: 'POST', path: '/products', perSecond: 2 }],
    })
    expect(await statuses(3, '/products', { method: 'POST' })).toEqual([200, 200, 429])
    const refused = await hit('/products', { method: 'POST' })
    expect(refused.headers.get('ratelimit')).toBe('"POST /products";r=0;t=1')
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await statuses(19, '/items')).toEqual([...Array(18).fill(200), 429])
    now += 500
    expect((await hit('/products', { method: 'POST' })).status).toBe(200)
    expect(server!.stats().byEndpoint).toEqual({
      'POST /products': { admitted: 3, rejected: 2 },
      global: { admitted: 18, rejected: 1 },
    })
  })

  it('answers CORS preflights without spending quota and exposes the rate-limit headers', async () => {
    await start({ quota: { capacity: 1, perMinute: 60 }, feedback: 'ratelimit' })
    const preflight = await fetch(`${server!.url}/compute`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-feedback, content-type' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST')
    expect(preflight.headers.get('access-control-allow-headers')).toBe('x-feedback, content-type')
    const response = await hit('/compute', { method: 'POST', headers: { origin: 'http://localhost:5173' } })
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    const exposed = response.headers.get('access-control-expose-headers')!.split(', ')
    for (const name of ['Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Date']) {
      expect(exposed).toContain(name)
    }
    expect(server!.stats().admitted).toBe(1)
  })

  it('counts admissions per second of wall time, and serves the same JSON on GET /__stats', async () => {
    await start({ quota: { capacity: 3, perMinute: 60 } })
    await statuses(4)
    now += 2_000
    await statuses(3)
    const stats = server!.stats()
    expect(stats).toMatchObject({ kind: 'token-bucket-continuous', feedback: 'status-only', timeScale: 1, startedAt: T0, admitted: 5, rejected: 2 })
    expect(stats.quota).toEqual({ capacity: 3, perMinute: 60, stepIntervalMs: 60_000 })
    expect(stats.perSecond).toEqual([
      { second: 0, admitted: 3, rejected: 1 },
      { second: 2, admitted: 2, rejected: 1 },
    ])
    const served = await fetch(`${server!.url}/__stats`)
    expect(served.headers.get('access-control-allow-origin')).toBe('*')
    expect(await served.json()).toEqual(stats)
    expect(server!.stats().admitted).toBe(5) // reading stats spends nothing
  })

  it('reset() and POST /__reset give a full bucket and zeroed stats', async () => {
    await start({ quota: { capacity: 2, perMinute: 1 } })
    expect(await statuses(3)).toEqual([200, 200, 429])
    server!.reset()
    expect(server!.stats()).toMatchObject({ admitted: 0, rejected: 0, perSecond: [], byEndpoint: {} })
    expect(await statuses(3)).toEqual([200, 200, 429])
    now += 10
    const reset = await fetch(`${server!.url}/__reset`, { method: 'POST' })
    expect(reset.status).toBe(200)
    expect(server!.stats().startedAt).toBe(T0 + 10)
    expect(await statuses(3)).toEqual([200, 200, 429])
  })

  it('runs model time timeScale× faster and scales the headers back to wall time', async () => {
    await start({ timeScale: 10, feedback: 'ratelimit', quota: { capacity: 20, perMinute: 80 } })
    await statuses(20)
    const refused = await hit()
    expect(refused.status).toBe(429)
    // 15 s of model time to refill 20 tokens is 1.5 s of wall time (rounded up: 2); the next token 75 ms.
    expect(refused.headers.get('ratelimit-policy')).toBe('"global";q=20;w=2')
    expect(refused.headers.get('ratelimit')).toBe('"global";r=0;t=2')
    expect(refused.headers.get('retry-after')).toBe('1')
    now += 74
    expect((await hit()).status).toBe(429)
    now += 1
    expect((await hit()).status).toBe(200)
    now += 6_000 // six wall seconds = one model minute: 80 tokens, capped at 20
    expect((await statuses(21)).filter((c) => c === 200)).toHaveLength(20)
  })

  it('x-ratelimit resets are wall-clock epochs under time compression', async () => {
    await start({ timeScale: 10, feedback: 'x-ratelimit', quota: { capacity: 1, perMinute: 6 } })
    const first = await hit()
    // 10 s of model time to refill one token = 1 s of wall time.
    expect(first.headers.get('x-ratelimit-reset')).toBe(String(T0 / 1000 + 1))
  })

  it('refills in steps when asked (Envoy-style)', async () => {
    await start({ refill: 'stepped', quota: { capacity: 2, perMinute: 2, stepIntervalMs: 60_000 } })
    expect(await statuses(3)).toEqual([200, 200, 429])
    now += 59_999
    expect((await hit()).status).toBe(429)
    now += 1
    expect(await statuses(3)).toEqual([200, 200, 429])
    expect(server!.stats().kind).toBe('token-bucket-stepped')
  })

  it('puts any server model in front', async () => {
    await start({ kind: 'fixed-window', quota: { capacity: 2, perMinute: 2 }, feedback: 'x-ratelimit' })
    expect(await statuses(3)).toEqual([200, 200, 429])
    now += 59_000
    const refused = await hit()
    expect(refused.headers.get('retry-after')).toBe('1')
    now += 1_000
    expect((await hit()).status).toBe(200)
  })

  it('refuses a bad configuration before listening', async () => {
    await expect(startQuotaServer({ quota: { capacity: 0 } })).rejects.toThrow(RangeError)
    await expect(startQuotaServer({ timeScale: 0 })).rejects.toThrow(RangeError)
  })

  it('closes promptly even with keep-alive connections open', async () => {
    const s = await start()
    await statuses(3)
    await s.close()
    server = undefined
    await expect(fetch(`${s.url}/x`)).rejects.toThrow()
  })
})
