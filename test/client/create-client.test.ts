import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { createLimiter } from '../../src/client/create-limiter.js'
import { ClosedError } from '../../src/client/errors.js'
import { none } from '../../src/core/pacers/none.js'
import { PACED_HEADER, PACED_HEADER_VALUE } from '../../src/client/fetch-job.js'
import { READ_FIRST_RESPONSES, READ_ONE_IN } from '../../src/client/header-sampling.js'
import type { GiveUpEvent, LimiterEventName, LimiterEvents } from '../../src/client/limiter-events.js'
import type { ClientOptions } from '../../src/client/options.js'
import { type LocalServer, startLocalServer } from '../helpers/local-server.js'
import { flushPromises, ManualClock } from '../helpers/manual-clock.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'
import { track } from '../helpers/scripted-job.js'

let server: LocalServer
let clock: ManualClock
let client: Client

beforeEach(async () => {
  server = await startLocalServer()
  clock = new ManualClock()
})

afterEach(async () => {
  await client?.close()
  await server.close()
})

function makeClient(options: ClientOptions = {}): Client {
  client = createClient({ clock, random: () => 0, strategy: recordingStrategy({ intervalMs: 10 }), ...options })
  return client
}

function next<E extends LimiterEventName>(event: E): Promise<LimiterEvents[E]> {
  return new Promise((resolve) => {
    const off = client.on(event, (payload) => {
      off()
      resolve(payload)
    })
  })
}

describe('createClient: fetch compatibility', () => {
  it('has the signature of the global fetch', () => {
    const polite: typeof fetch = makeClient().fetch
    const plain: Client['fetch'] = fetch
    expect(typeof polite).toBe('function')
    expect(typeof plain).toBe('function')
  })

  it('sends at once and returns the response, non-2xx included, with no waits before congestion', async () => {
    makeClient()
    server.reply({ status: 404, body: 'nope' })
    const t0 = clock.now()
    const responses = await Promise.all([
      client.fetch(`${server.origin}/missing`),
      client.fetch(new URL(`${server.origin}/a`)),
      client.fetch(new Request(`${server.origin}/b`)),
    ])
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 404])
    expect(await responses.find((r) => r.status === 404)?.text()).toBe('nope')
    expect(clock.now()).toBe(t0)
    expect(client.stats()[0]).toMatchObject({ scope: server.origin, attempts: 3, successes: 3 })
  })

  it('with the default strategy (atb), concurrent first requests all go out at once', async () => {
    client = createClient({ clock, random: () => 0 })
    const t0 = clock.now()
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => client.fetch(`${server.origin}/r${i}`)))
    expect(responses.every((r) => r.status === 200)).toBe(true)
    expect(clock.now()).toBe(t0)
    expect(client.stats()[0]).toMatchObject({ attempts: 20, queued: 0 })
  })

  it('feeds quota hints on a 200 to the pacer, and the status alone when there are none', async () => {
    const strategy = recordingStrategy({ intervalMs: 10 })
    makeClient({ strategy })
    server.reply({ status: 200, headers: { 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '20' } })
    await (await client.fetch(`${server.origin}/hinted`)).text()
    server.reply({ status: 200 })
    await (await client.fetch(`${server.origin}/plain`)).text()
    const results = strategy.pacers[0]?.results() ?? []
    expect(results[0]).toMatchObject({ kind: 'ok', status: 200, remaining: 7 })
    expect(results[1]).toEqual({ kind: 'ok', status: 200 })
  })

  it('notices fields a server starts sending on 200s within READ_ONE_IN responses, then reads every one', async () => {
    const strategy = recordingStrategy({ intervalMs: 10 })
    makeClient({ strategy })
    const clean = READ_FIRST_RESPONSES + 3
    for (let i = 0; i < clean; i++) await (await client.fetch(`${server.origin}/plain`)).text()
    server.setDefault({ status: 200, headers: { 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '20' } })
    const later = 3 * READ_ONE_IN
    for (let i = 0; i < later; i++) await (await client.fetch(`${server.origin}/hinted`)).text()
    const hinted = (strategy.pacers[0]?.results() ?? []).slice(clean).map((signal) => signal.remaining)
    const firstSeen = hinted.indexOf(7)
    expect(firstSeen).toBeGreaterThanOrEqual(0)
    expect(firstSeen).toBeLessThan(READ_ONE_IN)
    // Skipped ones are the status alone, as a response without fields; from the first seen on, all read.
    expect(hinted.slice(0, firstSeen).every((remaining) => remaining === undefined)).toBe(true)
    expect(hinted.slice(firstSeen)).toEqual(Array(later - firstSeen).fill(7))
  })

  it('reads a 429 after many clean responses: its Retry-After is honoured', async () => {
    makeClient()
    for (let i = 0; i < READ_FIRST_RESPONSES + 2 * READ_ONE_IN; i++) await (await client.fetch(`${server.origin}/ok`)).text()
    server.reply({ status: 429, headers: { 'retry-after': '3' } })
    const t0 = clock.now()
    const call = track(client.fetch(`${server.origin}/busy`))
    await expect(next('retry')).resolves.toMatchObject({ notBefore: t0 + 3_000 })
    await clock.advance(3_000)
    expect((await call.promise).status).toBe(200)
  })

  it('puts a string, a URL and a Request for one origin in the same lane, however the host is spelled', async () => {
    makeClient()
    const port = new URL(server.origin).port
    await (await client.fetch(`http://127.0.0.1:0${port}/a`)).text() // a leading zero in the port
    await (await client.fetch(new URL(`${server.origin}/b`))).text()
    await (await client.fetch(new Request(`${server.origin}/c`))).text()
    await (await client.fetch(server.origin.replace('http://', 'HTTP://') + '/d')).text()
    expect(client.stats().map((s) => `${s.scope} ${s.attempts}`)).toEqual([`${server.origin} 4`])
  })

  it('reads init as fetch does: null is no init, and members may be inherited (a Request as init)', async () => {
    makeClient()
    expect((await client.fetch(`${server.origin}/a`, null as never)).status).toBe(200)
    await client.fetch(`${server.origin}/b`, Object.create({ method: 'POST', body: 'x', headers: { 'x-a': '1' } }))
    await client.fetch(`${server.origin}/c`, new Request('http://unused.invalid/', { method: 'PUT', headers: { 'x-a': '2' } }) as RequestInit)
    expect(server.requests.map((r) => `${r.method} ${r.url} ${r.headers['x-a']} ${r.body}`)).toEqual(['GET /a undefined ', 'POST /b 1 x', 'PUT /c 2 '])
  })

  it('sends headers given as a one-shot iterator on the request and on its retry', async () => {
    makeClient()
    const oneShot = (value: string): HeadersInit => new Map([['x-a', value]]).entries() as unknown as HeadersInit
    await client.fetch(`${server.origin}/post`, { method: 'POST', body: 'x', headers: oneShot('1') })
    server.reply({ status: 429, headers: { 'retry-after-ms': '40' } })
    const call = track(client.fetch(`${server.origin}/get`, { headers: oneShot('2') }))
    for (let step = 0; step < 20 && !call.settled; step++) {
      await new Promise((resolve) => setTimeout(resolve, 2)) // let real I/O progress
      await clock.advance(100)
    }
    expect(call.value?.status).toBe(200)
    expect(server.requests.map((r) => `${r.method} ${r.url} ${r.headers['x-a']}`)).toEqual(['POST /post 1', 'GET /get 2', 'GET /get 2'])
  })

  it('sends the URL a URL object had when the call was made, though the caller reuses the object', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after-ms': '40' } })
    const url = new URL(`${server.origin}/list`)
    const calls = [1, 2, 3].map((page) => {
      url.searchParams.set('page', String(page)) // one URL object, moved on per call
      return track(client.fetch(url))
    })
    for (let step = 0; step < 20 && calls.some((call) => !call.settled); step++) {
      await new Promise((resolve) => setTimeout(resolve, 2)) // let real I/O progress
      await clock.advance(100)
    }
    expect(calls.map((call) => call.value?.status)).toEqual([200, 200, 200])
    expect(server.requests.map((r) => r.url).sort()).toEqual(['/list?page=1', '/list?page=1', '/list?page=2', '/list?page=3'])
  })

  it('sends the headers and body an init had when the call was made, though the caller reuses them', async () => {
    makeClient()
    // A 429 gates the lane first: the calls below wait in its queue and go out later.
    server.reply({ status: 429, headers: { 'retry-after-ms': '40' } })
    const retried = next('retry')
    const gate = track(client.fetch(`${server.origin}/gate`))
    await retried
    const headers: Record<string, string> = {}
    const form = new URLSearchParams()
    const bytes = new Uint8Array(1)
    const calls = [1, 2, 3].map((page) => {
      // One headers object, one form and one buffer, moved on per call (fetch reads them at the call).
      headers['x-page'] = String(page)
      form.set('page', String(page))
      bytes[0] = 48 + page
      return [
        track(client.fetch(`${server.origin}/h`, { headers })),
        track(client.fetch(`${server.origin}/f`, { method: 'POST', body: form })),
        track(client.fetch(`${server.origin}/b`, { method: 'POST', body: bytes })),
      ]
    }).flat()
    calls.push(gate)
    for (let step = 0; step < 20 && calls.some((call) => !call.settled); step++) {
      await new Promise((resolve) => setTimeout(resolve, 2)) // let real I/O progress
      await clock.advance(100)
    }
    expect(calls.every((call) => call.value?.status === 200)).toBe(true)
    const sent = server.requests.map((r) => `${r.url} ${r.headers['x-page'] ?? ''}${r.body}`).sort()
    expect(sent).toEqual(['/b 1', '/b 2', '/b 3', '/f page=1', '/f page=2', '/f page=3', '/gate ', '/gate ', '/h 1', '/h 2', '/h 3'])
  })

  it('passes non-HTTP URLs straight to fetch', async () => {
    makeClient()
    const response = await client.fetch('data:text/plain,hello')
    expect(await response.text()).toBe('hello')
    expect(client.stats()).toEqual([])
  })
})

describe('createClient: Retry-After', () => {
  it('honours delay-seconds to the millisecond', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after': '3' } })
    const t0 = clock.now()
    const call = track(client.fetch(`${server.origin}/x`))
    await next('retry')
    await clock.advance(2_999)
    expect(server.requests).toHaveLength(1)
    await clock.advance(1)
    const response = await call.promise
    expect(response.status).toBe(200)
    expect(server.requests).toHaveLength(2)
    expect(clock.now()).toBe(t0 + 3_000)
  })

  it('honours an HTTP-date against the response Date, to the millisecond', async () => {
    makeClient()
    // The server's clock runs 3 h ahead of ours: only the Date difference counts.
    const serverNow = Math.floor((clock.now() + 3 * 3_600_000) / 1_000) * 1_000
    server.reply({
      status: 503,
      headers: {
        date: new Date(serverNow).toUTCString(),
        'retry-after': new Date(serverNow + 7_000).toUTCString(),
      },
    })
    const t0 = clock.now()
    const call = track(client.fetch(`${server.origin}/x`))
    const retry = await next('retry')
    expect(retry).toMatchObject({ reason: 'overloaded', status: 503, retryAt: t0 + 7_000, delayMs: 7_000 })
    await clock.advance(6_999)
    expect(server.requests).toHaveLength(1)
    await clock.advance(1)
    expect((await call.promise).status).toBe(200)
  })

  it('fails fast past maxRetryAfterMs', async () => {
    makeClient({ maxRetryAfterMs: 5_000 })
    server.reply({ status: 429, headers: { 'retry-after': '3600' } })
    await expect(client.fetch(`${server.origin}/x`)).rejects.toMatchObject({
      name: 'RetryAfterTooLongError',
      retryAt: clock.now() + 3_600_000,
      request: `GET ${server.origin}/x`,
    })
  })
})

describe("createClient: giveUp: 'response'", () => {
  it('resolves a too-long Retry-After with the 429, headers and body intact, plus the give-up fields', async () => {
    makeClient({ giveUp: 'response' })
    server.reply({ status: 429, headers: { 'retry-after': '120', 'x-vendor': 'kept', 'x-should-retry': 'true' }, body: '{"e":1}' })
    const res = await client.fetch(`${server.origin}/x`, { method: 'POST', body: 'b' })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('120')
    expect(res.headers.get('x-vendor')).toBe('kept')
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(res.headers.get('x-polite-fetch-give-up')).toBe(`retry-after-too-long; retry-at="${new Date(clock.now() + 120_000).toISOString()}"`)
    expect(await res.text()).toBe('{"e":1}')
    expect(server.requests).toHaveLength(1)
  })

  it('a deadline reached while waiting for the retry answers with the last 503, without its body', async () => {
    makeClient({ giveUp: 'response', deadlineMs: 1_000, maxInFlight: 1 })
    server.reply({ status: 503, headers: { 'retry-after': '0', 'x-n': '1' }, body: 'busy' }, 'hang')
    const call = track(client.fetch(`${server.origin}/x`))
    await next('retry')
    await clock.advance(10) // the recording pacer's spacing after a 503
    await server.waitForRequests(2)
    await clock.advance(990)
    const res = await call.promise
    expect(res.status).toBe(503)
    expect(res.headers.get('x-n')).toBe('1')
    expect(res.headers.get('x-polite-fetch-give-up')).toBe('deadline')
    expect(await res.text()).toBe('')
  })

  it("'throw' (the default) rejects; 'response' answers a call gated past its deadline with the gating 429, a network failure rejects", async () => {
    makeClient({ deadlineMs: 5_000 })
    server.reply({ status: 429, headers: { 'retry-after': '30' } })
    await expect(client.fetch(`${server.origin}/x`)).rejects.toMatchObject({ name: 'DeadlineError' })
    await client.close()
    makeClient({ giveUp: 'response', deadlineMs: 5_000 })
    server.reply({ status: 429, headers: { 'retry-after': '30', 'x-n': '1' }, body: 'first' })
    const first = await client.fetch(`${server.origin}/x`)
    const gated = await client.fetch(`${server.origin}/y`)
    expect([first.status, gated.status]).toEqual([429, 429])
    expect(gated.headers.get('x-n')).toBe('1')
    expect(await first.text()).toBe('first')
    expect(await gated.text()).toBe('')
    expect(server.requests).toHaveLength(2)
    server.reply('destroy')
    await expect(client.fetch(`${server.origin.replace('127.0.0.1', 'localhost')}/z`, { method: 'POST' })).rejects.toThrow(TypeError)
  })

  it('applies its own giveUp on a shared limiter, and checks it', async () => {
    const limiter = createLimiter({ clock, random: () => 0, strategy: none(), retryBudget: 0 })
    makeClient({ limiter, giveUp: 'response' })
    server.reply({ status: 429 })
    expect((await client.fetch(`${server.origin}/x`)).headers.get('x-polite-fetch-give-up')).toBe('retry-budget')
    expect(() => createClient({ limiter, giveUp: 'maybe' as 'throw' })).toThrow(/`giveUp` must be/)
    await limiter.close()
  })
})

describe('createClient: bodies', () => {
  it('replays a string (JSON) body on the retry: the server sees it twice', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after': '1' } })
    const body = JSON.stringify({ order: 42, items: ['a', 'b'] })
    const call = track(
      client.fetch(`${server.origin}/orders`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
    )
    await next('retry')
    await clock.advance(1_000)
    expect((await call.promise).status).toBe(200)
    expect(server.requests.map((r) => r.body)).toEqual([body, body])
    expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST'])
  })

  it('buffers a Request body once and replays it', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after': '1' } })
    const request = new Request(`${server.origin}/upload`, { method: 'PUT', body: 'payload-bytes' })
    const call = track(client.fetch(request))
    await next('retry')
    await clock.advance(1_000)
    expect((await call.promise).status).toBe(200)
    expect(server.requests.map((r) => `${r.method} ${r.body}`)).toEqual(['PUT payload-bytes', 'PUT payload-bytes'])
  })

  it('calls a body factory once per attempt', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after': '1' } })
    let made = 0
    const call = track(
      client.fetch(`${server.origin}/stream`, {
        method: 'POST',
        politeFetch: { body: () => `fresh-${++made}` },
      }),
    )
    await next('retry')
    await clock.advance(1_000)
    expect((await call.promise).status).toBe(200)
    expect(server.requests.map((r) => r.body)).toEqual(['fresh-1', 'fresh-2'])
  })

  it('returns the 429 with a give-up event when a streamed body cannot be replayed', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after': '1' }, body: 'slow down' })
    const giveUp = next('give-up')
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed'))
        controller.close()
      },
    })
    const response = await client.fetch(`${server.origin}/once`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(response.status).toBe(429)
    expect(await response.text()).toBe('slow down')
    expect(await giveUp).toMatchObject<Partial<GiveUpEvent>>({ reason: 'body-not-replayable', status: 429 })
    expect(server.requests.map((r) => r.body)).toEqual(['streamed'])
  })

  it('does not buffer a Request body over maxBodyBytes, but still sends it whole', async () => {
    makeClient({ maxBodyBytes: 4 })
    server.reply({ status: 429, headers: { 'retry-after': '1' } })
    const giveUp = next('give-up')
    const response = await client.fetch(new Request(`${server.origin}/big`, { method: 'POST', body: 'more than four' }))
    expect(response.status).toBe(429)
    expect((await giveUp).reason).toBe('body-not-replayable')
    expect(server.requests.map((r) => r.body)).toEqual(['more than four'])
  })
})

describe('createClient: safety', () => {
  it('rejects a request fetch refuses to send (bad header name) at once, without retrying', async () => {
    makeClient()
    const giveUp = next('give-up')
    // The clock never moves: a retried call would wait on it and never settle.
    await expect(client.fetch(`${server.origin}/a`, { headers: { 'bad name': 'x' } })).rejects.toThrow(TypeError)
    expect((await giveUp).reason).toBe('invalid-request')
    expect(server.requests).toHaveLength(0)
  })

  it('still retries a GET whose TypeError is a network failure', async () => {
    makeClient()
    server.reply('destroy')
    const call = track(client.fetch(`${server.origin}/a`))
    const retry = await next('retry')
    await clock.advance(retry.delayMs)
    expect((await call.promise).status).toBe(200)
  })

  it('createClient(null) fails with the option error', () => {
    expect(() => createClient(null as never)).toThrow('option `options` must be an object')
  })

  it('does not retry a POST after a network error', async () => {
    makeClient()
    server.reply('destroy')
    await expect(client.fetch(`${server.origin}/pay`, { method: 'POST', body: 'x' })).rejects.toThrow(TypeError)
    expect(server.requests).toHaveLength(1)
  })

  it('retries a POST with an Idempotency-Key after a network error', async () => {
    makeClient()
    server.reply('destroy')
    const call = track(
      client.fetch(`${server.origin}/pay`, { method: 'POST', body: 'x', headers: { 'Idempotency-Key': 'k-1' } }),
    )
    const retry = await next('retry')
    expect(retry.reason).toBe('error')
    await clock.advance(retry.delayMs)
    expect((await call.promise).status).toBe(200)
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['k-1', 'k-1'])
  })

  it('treats responses our service worker already paced as final', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after': '1', [PACED_HEADER]: PACED_HEADER_VALUE } })
    const response = await client.fetch(`${server.origin}/x`)
    expect(response.status).toBe(429)
    expect(server.requests).toHaveLength(1)
    expect(client.stats()[0]).toMatchObject({ throttled: 0, retries: 0 })
  })

  it('abort during an attempt rejects with the reason, as fetch does', async () => {
    makeClient()
    server.reply('hang')
    const controller = new AbortController()
    const call = track(client.fetch(`${server.origin}/slow`, { signal: controller.signal }))
    await server.waitForRequests(1)
    controller.abort(new Error('user left'))
    await expect(call.promise).rejects.toThrow('user left')
  })

  it('abort during a retry wait rejects at once without another attempt', async () => {
    makeClient()
    server.reply({ status: 429, headers: { 'retry-after': '30' } })
    const controller = new AbortController()
    const call = track(client.fetch(new Request(`${server.origin}/x`, { signal: controller.signal })))
    await next('retry')
    controller.abort('stop')
    await expect(call.promise).rejects.toBe('stop')
    await clock.advance(60_000)
    expect(server.requests).toHaveLength(1)
  })
})

describe('createClient: scopes', () => {
  it('a 429 on one origin does not delay another', async () => {
    makeClient()
    const other = await startLocalServer()
    try {
      server.reply({ status: 429, headers: { 'retry-after': '30' } })
      const first = track(client.fetch(`${server.origin}/a`))
      await next('retry')
      const second = track(client.fetch(`${server.origin}/b`))
      const elsewhere = await client.fetch(`${other.origin}/c`)
      expect(elsewhere.status).toBe(200)
      await flushPromises()
      expect(second.settled).toBe(false)
      expect(first.settled).toBe(false)
    } finally {
      await other.close()
    }
  })

  it('learns a route policy and moves the route to its own lane', async () => {
    makeClient()
    server.reply({
      status: 200,
      headers: { 'x-ratelimit-remaining': '5', 'x-ratelimit-limit': '10', 'x-ratelimit-bucket': 'products' },
    })
    await (await client.fetch(`${server.origin}/products/1`, { method: 'POST' })).text()
    await (await client.fetch(`${server.origin}/products/2`, { method: 'POST' })).text()
    await (await client.fetch(`${server.origin}/items`)).text()
    const scopes = client.stats().map((s) => `${s.scope} ${s.attempts}`)
    expect(scopes.sort()).toEqual([`${server.origin} 2`, `${server.origin}#products 1`])
  })

  it('uses the scope and cost options', async () => {
    const costs: string[] = []
    makeClient({
      scope: (request) => `tenant:${request.headers.get('x-tenant') ?? 'none'}`,
      cost: (request) => {
        costs.push(request.method)
        return 2
      },
    })
    await client.fetch(`${server.origin}/a`, { headers: { 'x-tenant': 't1' } })
    expect(client.stats().map((s) => s.scope)).toEqual(['tenant:t1'])
    expect(costs).toEqual(['GET'])
  })
})

describe('createClient: settling', () => {
  it('every call settles under a flood of mixed failures over real HTTP', async () => {
    makeClient({ deadlineMs: 5_000, timeoutMs: 1_000, maxInFlight: 8, maxQueue: 40 })
    let seed = 7
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
      return seed / 2 ** 31
    }
    server.setDefault(() => {
      const r = random()
      if (r < 0.3) return { status: 200, body: 'ok' }
      if (r < 0.5) return { status: 429, headers: { 'retry-after': String(Math.floor(random() * 3)) } }
      if (r < 0.6) return { status: 429, headers: { 'retry-after': '600' } }
      if (r < 0.75) return { status: 503 }
      if (r < 0.85) return 'destroy'
      if (r < 0.92) return 'hang'
      return { status: 404 }
    })
    const calls = Array.from({ length: 120 }, (_, i) => {
      const controller = new AbortController()
      const method = i % 3 === 0 ? 'POST' : 'GET'
      const init: RequestInit = { method, signal: controller.signal }
      if (method === 'POST') init.body = `body-${i}`
      const call = track(client.fetch(`${server.origin}/${i % 4 === 0 ? 'a' : 'b'}/${i}`, init))
      if (i % 10 === 0) setTimeout(() => controller.abort('caller gave up'), 5)
      return call
    })
    for (let step = 0; step < 200 && calls.some((c) => !c.settled); step++) {
      await new Promise((resolve) => setTimeout(resolve, 2)) // let real I/O progress
      await clock.advance(100)
    }
    expect(calls.filter((c) => !c.settled)).toHaveLength(0)
    for (const call of calls) {
      if (call.error === undefined) expect(call.value).toBeInstanceOf(Response)
      else expect(call.error).toBeDefined()
    }
  })
})

describe('createClient: a Request body still arriving', () => {
  // A Request whose body stream has not ended: the client reads it (to replay it) before the
  // call reaches a lane, and that read must not outlast the caller's abort or close().
  const stalledRequest = (signal?: AbortSignal): Request =>
    new Request(`${server.origin}/upload`, {
      method: 'POST',
      body: new ReadableStream<Uint8Array>({ start: () => {} }),
      duplex: 'half',
      ...(signal === undefined ? {} : { signal }),
    } as RequestInit)

  it('rejects with the abort reason when the caller aborts', async () => {
    makeClient()
    const controller = new AbortController()
    const call = track(client.fetch(stalledRequest(controller.signal)))
    await flushPromises()
    expect(call.settled).toBe(false)
    controller.abort('caller gave up')
    await flushPromises()
    expect(call.error).toBe('caller gave up')
    expect(server.requests).toHaveLength(0)
  })

  it('rejects with ClosedError when the client closes', async () => {
    makeClient()
    const call = track(client.fetch(stalledRequest()))
    await flushPromises()
    await client.close()
    await flushPromises()
    expect(call.error).toBeInstanceOf(ClosedError)
  })
})

describe('createClient({ limiter })', () => {
  it('shares lanes with another shell: a 429 seen by one client gates the other', async () => {
    const server = await startLocalServer()
    const shared = createLimiter({ strategy: none() })
    const a = createClient({ limiter: shared })
    const b = createClient({ limiter: shared })
    server.reply({ status: 429, headers: { 'retry-after-ms': '40' } })
    const first = await a.fetch(`${server.origin}/x`)
    expect(first.status).toBe(200)
    expect(shared.stats()).toHaveLength(1)
    expect(shared.stats()[0]).toMatchObject({ throttled: 1, successes: 1 })
    await b.fetch(`${server.origin}/y`)
    expect(shared.stats()[0]).toMatchObject({ successes: 2 })
    await a.close() // does not close the shared limiter
    expect((await b.fetch(`${server.origin}/z`)).status).toBe(200)
    await shared.close()
    await server.close()
  })

  it("close() leaves a settled call's response alone, even when its scope function made another call", async () => {
    const server = await startLocalServer()
    const shared = createLimiter({ clock, strategy: none() })
    const inner: Promise<Response>[] = []
    const a: Client = createClient({
      limiter: shared,
      clock,
      scope: (request) => {
        // Re-enters the client while the outer call is being prepared.
        if (request.url.pathname === '/outer') inner.push(a.fetch(`${server.origin}/inner`))
        return request.url.origin
      },
    })
    const outer = await a.fetch(`${server.origin}/outer`)
    await (await inner[0])?.text()
    await flushPromises()
    await a.close()
    expect(await outer.text()).toBe('ok')
    await shared.close()
    await server.close()
  })

  it('close() ends its own calls (waiting, in flight) with ClosedError and sends nothing after; the limiter and other shells go on', async () => {
    const gated = await startLocalServer()
    const hanging = await startLocalServer()
    const shared = createLimiter({ clock, strategy: none() })
    const a = createClient({ limiter: shared, clock })
    const b = createClient({ limiter: shared, clock })
    gated.reply({ status: 429, headers: { 'retry-after': '20' } })
    hanging.reply('hang')
    const retried = new Promise((resolve) => shared.on('retry', resolve))
    const waiting = track(a.fetch(`${gated.origin}/x`))
    await retried
    const inFlight = track(a.fetch(`${hanging.origin}/h`))
    await hanging.waitForRequests(1)
    await a.close()
    await flushPromises()
    expect(waiting.error).toBeInstanceOf(ClosedError)
    expect(inFlight.error).toBeInstanceOf(ClosedError)
    await expect(a.fetch(`${gated.origin}/after`)).rejects.toBeInstanceOf(ClosedError)
    await clock.advance(25_000)
    expect(gated.requests.map((r) => r.url)).toEqual(['/x'])
    expect((await b.fetch(`${gated.origin}/other`)).status).toBe(200)
    await shared.close()
    await gated.close()
    await hanging.close()
  })
})
