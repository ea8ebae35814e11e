import { Readable } from 'node:stream'
import { Agent, FormData as UndiciFormData, fetch as undiciFetch, request, type Dispatcher } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { GiveUpEvent } from '../../src/client/limiter-events.js'
import { atb, none } from '../../src/core/pacers/index.js'
import type { Limiter } from '../../src/client/create-limiter.js'
import { politeAgent, politeInterceptor, type PoliteInterceptorOptions as PoliteOptions } from '../../src/node/index.js'
import { startScriptedServer, type Reply, type ScriptedServer } from './scripted-server.js'
import { recordingStrategy, throttleFirst } from './shell-test-kit.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

// The paced path (src/node/pacing.ts) behind both undici shells: every behaviour here
// runs through `politeInterceptor` composed onto an Agent and through `politeAgent`.
// The mechanics (retry, replay, abort) are tested with the `none` strategy (retry at
// once, no pacing) so they do not depend on ATB's tuning; pacing has its own tests.
type Shell = 'politeInterceptor' | 'politeAgent'
const SHELLS: Shell[] = ['politeInterceptor', 'politeAgent']

async function setupShell(shell: Shell, script: (n: number) => Reply, options: PoliteOptions = {}) {
  const server: ScriptedServer = await startScriptedServer(script)
  const giveUps: GiveUpEvent[] = []
  let dispatcher: Dispatcher
  let limiter: Limiter
  if (shell === 'politeInterceptor') {
    const interceptor = politeInterceptor({ strategy: none(), ...options })
    const agent = new Agent()
    dispatcher = agent.compose(interceptor)
    limiter = interceptor.limiter
    cleanups.push(() => server.close(), () => agent.close(), () => interceptor.limiter.close())
  } else {
    const agent = politeAgent({ strategy: none(), ...options })
    dispatcher = agent
    limiter = agent.limiter
    cleanups.push(() => server.close(), () => agent.close())
  }
  limiter.on('give-up', (event) => giveUps.push(event))
  return { server, dispatcher, limiter, giveUps }
}

describe.each(SHELLS)('%s with undici.request', (shell) => {
  const setup = (script: (n: number) => Reply, options: PoliteOptions = {}) => setupShell(shell, script, options)

  it('passes a healthy response through untouched in one attempt', async () => {
    const { server, dispatcher, limiter } = await setup(() => ({ status: 201, headers: { 'x-test': 'yes' }, body: 'created' }))
    const res = await request(`${server.url}/things?q=1`, { dispatcher, method: 'PUT', body: 'x' })
    expect(res.statusCode).toBe(201)
    expect(res.headers['x-test']).toBe('yes')
    expect(await res.body.text()).toBe('created')
    expect(server.received.map((r) => `${r.method} ${r.path} ${r.body}`)).toEqual(['PUT /things?q=1 x'])
    expect(limiter.stats()).toMatchObject([{ scope: server.url, attempts: 1, successes: 1, throttled: 0 }])
  })

  it('swallows a 429 and retries: the caller sees only the final response', async () => {
    const { server, dispatcher, limiter } = await setup(throttleFirst(1))
    expect(limiter.stats()).toEqual([])
    const res = await request(`${server.url}/items/1`, { dispatcher })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-answer']).toBe('2')
    expect(await res.body.text()).toBe('ok 2')
    expect(server.received).toHaveLength(2)
    expect(limiter.stats()).toMatchObject([{ attempts: 2, throttled: 1, retries: 1, successes: 1 }])
  })

  it('with ATB (status-only), a 429 turns an unpaced lane into a paced one', async () => {
    // A short measuring span so the learned rate is fast enough for a test (the test runs well within the
    // internal 60 s measuring window, so the span is the time since the lane began).
    const strategy = atb({ minSpanMs: 100 })
    const { server, dispatcher, limiter } = await setup((n) => (n === 6 ? { status: 429 } : { status: 200 }), { strategy })
    const rates: number[] = []
    limiter.on('rate', (event) => rates.push(event.ratePerSecond))
    for (let i = 0; i < 5; i++) await (await request(`${server.url}/`, { dispatcher })).body.dump()
    expect(limiter.stats()[0]!.ratePerSecond).toBe(Infinity)
    const res = await request(`${server.url}/`, { dispatcher })
    await res.body.dump()
    expect(res.statusCode).toBe(200)
    expect(server.received).toHaveLength(7)
    expect(rates.length).toBeGreaterThan(0)
    expect(limiter.stats()[0]!.ratePerSecond).toBeLessThan(Infinity)
  })

  it('retries a 503 (overloaded) as well', async () => {
    const { server, dispatcher, limiter } = await setup(throttleFirst(2, { status: 503, body: 'busy' }))
    const res = await request(`${server.url}/`, { dispatcher })
    expect(res.statusCode).toBe(200)
    expect(await res.body.text()).toBe('ok 3')
    expect(limiter.stats()[0]).toMatchObject({ overloaded: 2, successes: 1 })
  })

  it('holds later attempts of the lane to its pacer after a 429', async () => {
    const spacingMs = 40
    const pacing = recordingStrategy(spacingMs)
    const { server, dispatcher } = await setup(throttleFirst(1), { strategy: pacing.strategy })
    const first = await request(`${server.url}/a`, { dispatcher })
    await first.body.dump()
    const rest = await Promise.all([1, 2].map((i) => request(`${server.url}/b${i}`, { dispatcher })))
    await Promise.all(rest.map((r) => r.body.dump()))
    // The 429 reached the pacer as a throttled signal read from undici's headers.
    expect(pacing.results.map((s) => `${s.kind} ${s.status}`)).toEqual(['throttled 429', 'ok 200', 'ok 200', 'ok 200'])
    expect(pacing.sends).toHaveLength(4)
    for (let i = 1; i < pacing.sends.length; i++) {
      expect(pacing.sends[i]! - pacing.sends[i - 1]!).toBeGreaterThanOrEqual(spacingMs)
    }
    expect(server.received.map((r) => r.path)).toEqual(['/a', '/a', '/b1', '/b2'])
  })

  it('never retries before the server’s retry-after-ms', async () => {
    const retryAfterMs = 120
    const { server, dispatcher } = await setup(
      throttleFirst(1, { status: 429, headers: { 'retry-after-ms': String(retryAfterMs) }, body: 'wait' }),
    )
    const res = await request(`${server.url}/`, { dispatcher })
    await res.body.dump()
    expect(res.statusCode).toBe(200)
    const [throttled, retried] = server.received
    // Date.now() has 1 ms steps; the client cannot have sent earlier than this.
    expect(retried!.atMs - throttled!.sentAtMs!).toBeGreaterThanOrEqual(retryAfterMs - 1)
  })

  it('fails fast with a DeadlineError when Retry-After lies past the deadline', async () => {
    const { server, dispatcher, giveUps } = await setup(() => ({ status: 429, headers: { 'retry-after': '30' }, body: 'later' }), {
      deadlineMs: 5_000,
    })
    await expect(request(`${server.url}/`, { dispatcher })).rejects.toMatchObject({ name: 'DeadlineError' })
    expect(server.received).toHaveLength(1)
    expect(giveUps.map((e) => e.reason)).toEqual(['deadline'])
  })

  it('replays a streaming body byte for byte: it is read (up to maxBodyBytes) before the first attempt', async () => {
    const { server, dispatcher, giveUps } = await setup(throttleFirst(1, { status: 429, body: 'slow down' }))
    const bytes = Buffer.from([0, 1, 2, 255, 254, 0x2c, 0xe2, 0x82, 0xac])
    const res = await request(`${server.url}/upload`, {
      dispatcher,
      method: 'POST',
      body: Readable.from([bytes.subarray(0, 4), bytes.subarray(4)]),
    })
    expect(res.statusCode).toBe(200)
    expect(await res.body.text()).toBe('ok 2')
    expect(server.receivedBytes.map((b) => b.toString('hex'))).toEqual([bytes.toString('hex'), bytes.toString('hex')])
    expect(giveUps).toEqual([])
  })

  it('replays an async-iterable body too', async () => {
    const { server, dispatcher } = await setup(throttleFirst(1))
    async function* chunks() {
      yield Buffer.from('on')
      yield 'ce'
    }
    // undici accepts async iterables; its types do not say so.
    const body = chunks() as unknown as Readable
    const res = await request(`${server.url}/`, { dispatcher, method: 'POST', body })
    expect(res.statusCode).toBe(200)
    await res.body.dump()
    expect(server.received.map((r) => r.body)).toEqual(['once', 'once'])
  })

  it('sends a stream longer than maxBodyBytes once, whole: its 429 is passed through (body-not-replayable)', async () => {
    const { server, dispatcher, giveUps } = await setup(throttleFirst(1, { status: 429, body: 'slow down' }), { maxBodyBytes: 8 })
    const res = await request(`${server.url}/upload`, {
      dispatcher,
      method: 'POST',
      body: Readable.from([Buffer.from('part-1;'), Buffer.from('part-2;'), Buffer.from('part-3')]),
    })
    expect(res.statusCode).toBe(429)
    expect(await res.body.text()).toBe('slow down')
    expect(server.received.map((r) => r.body)).toEqual(['part-1;part-2;part-3'])
    expect(giveUps).toMatchObject([{ reason: 'body-not-replayable', status: 429 }])
  })

  it('replays FormData (undici serialises it afresh per attempt)', async () => {
    const { server, dispatcher } = await setup(throttleFirst(1))
    const form = new UndiciFormData()
    form.set('field', 'value')
    const res = await request(`${server.url}/form`, { dispatcher, method: 'POST', body: form as unknown as string })
    expect(res.statusCode).toBe(200)
    await res.body.dump()
    expect(server.received).toHaveLength(2)
    for (const received of server.received) expect(received.body).toContain('value')
  })

  it('an abort while the body is being read settles the dispatch and sends nothing', async () => {
    const { server, dispatcher } = await setup(throttleFirst(0))
    const controller = new AbortController()
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    async function* slow() {
      yield Buffer.from('first')
      await held
      yield Buffer.from('second')
    }
    const pending = request(`${server.url}/`, { dispatcher, method: 'POST', body: slow() as unknown as Readable, signal: controller.signal })
    setImmediate(() => controller.abort())
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    release()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(server.received).toHaveLength(0)
  })

  it.each([
    ['a Buffer', Buffer.from('payload')],
    ['a string', 'payload'],
    ['a Uint8Array', new TextEncoder().encode('payload')],
  ])('replays %s body on retry', async (_name, body) => {
    const { server, dispatcher } = await setup(throttleFirst(2))
    const res = await request(`${server.url}/orders`, { dispatcher, method: 'POST', body })
    expect(res.statusCode).toBe(200)
    await res.body.dump()
    expect(server.received.map((r) => `${r.method} ${r.body}`)).toEqual(['POST payload', 'POST payload', 'POST payload'])
  })

  it('an abort during the lane wait settles the request at once and sends nothing more', async () => {
    const { server, dispatcher, limiter, giveUps } = await setup(() => ({
      status: 429,
      headers: { 'retry-after': '20' },
      body: 'later',
    }))
    const controller = new AbortController()
    // Abort once the call waits in the lane (the retry event fires just before it re-queues).
    limiter.on('retry', () => setImmediate(() => controller.abort(new Error('user gave up'))))
    await expect(request(`${server.url}/`, { dispatcher, signal: controller.signal })).rejects.toThrow('user gave up')
    expect(server.received).toHaveLength(1)
    expect(giveUps.map((e) => e.reason)).toEqual(['aborted'])
    expect(limiter.stats()[0]).toMatchObject({ queued: 0, inFlight: 0 })
  })

  it('an abort while the attempt is in flight aborts the socket request', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const { server, dispatcher, limiter } = await setup(() => ({ status: 200, body: 'late', holdUntil: held }))
    cleanups.push(async () => release())
    const controller = new AbortController()
    const pending = request(`${server.url}/`, { dispatcher, signal: controller.signal })
    for (let i = 0; i < 200 && server.received.length === 0; i++) await new Promise((r) => setTimeout(r, 5))
    expect(server.received).toHaveLength(1)
    controller.abort(new Error('stop'))
    await expect(pending).rejects.toThrow('stop')
    expect(limiter.stats()[0]).toMatchObject({ inFlight: 0 })
  })

  it('an already-aborted signal sends nothing', async () => {
    const { server, dispatcher } = await setup(() => ({ status: 200 }))
    await expect(request(`${server.url}/`, { dispatcher, signal: AbortSignal.abort(new Error('before')) })).rejects.toThrow('before')
    expect(server.received).toHaveLength(0)
  })

  it('a per-attempt timeout aborts a hung attempt and an idempotent request is sent again', async () => {
    const never = new Promise<void>(() => undefined)
    const { server, dispatcher, limiter } = await setup(
      (n) => (n === 1 ? { status: 200, holdUntil: never } : { status: 200, body: 'second' }),
      { timeoutMs: 50, errorBackoffBaseMs: 1 },
    )
    const res = await request(`${server.url}/`, { dispatcher })
    expect(await res.body.text()).toBe('second')
    expect(limiter.stats()[0]).toMatchObject({ errors: 1, successes: 1 })
  })

  it('the deadline ends a call whose attempt hangs, and cancels that attempt', async () => {
    const never = new Promise<void>(() => undefined)
    const { server, dispatcher, limiter } = await setup(() => ({ status: 200, holdUntil: never }), { deadlineMs: 100 })
    await expect(request(`${server.url}/`, { dispatcher })).rejects.toMatchObject({ name: 'DeadlineError' })
    expect(server.received).toHaveLength(1)
    expect(limiter.stats()[0]).toMatchObject({ inFlight: 0, queued: 0 })
  })

  it('closing the limiter settles waiting and in-flight requests with ClosedError', async () => {
    const never = new Promise<void>(() => undefined)
    const { server, dispatcher, limiter } = await setup((n) =>
      n === 1 ? { status: 429, headers: { 'retry-after': '20' } } : { status: 200, holdUntil: never },
    )
    const waiting = request(`${server.url}/a`, { dispatcher })
    for (let i = 0; i < 200 && limiter.stats()[0]?.queued !== 1; i++) await new Promise((r) => setTimeout(r, 5))
    const other = await startScriptedServer(() => ({ status: 200, holdUntil: never }))
    cleanups.push(() => other.close())
    const inFlight = request(`${other.url}/b`, { dispatcher })
    for (let i = 0; i < 200 && other.received.length === 0; i++) await new Promise((r) => setTimeout(r, 5))
    await limiter.close()
    await expect(waiting).rejects.toMatchObject({ name: 'ClosedError' })
    await expect(inFlight).rejects.toMatchObject({ name: 'ClosedError' })
  })

  it('a request undici refuses as malformed fails at once, not retried until the deadline', async () => {
    const { server, dispatcher, giveUps } = await setup(() => ({ status: 200 }))
    await expect(request(`${server.url}/`, { dispatcher, headers: { 'bad name': 'x' } })).rejects.toMatchObject({
      code: 'UND_ERR_INVALID_ARG',
    })
    expect(server.received).toHaveLength(0)
    expect(giveUps.map((e) => e.reason)).toEqual(['invalid-request'])
  })

  it('a request whose body does not match its content-length, or with an Expect header, fails at once like undici alone', async () => {
    // undici refuses both before sending (RequestContentLengthMismatchError, NotSupportedError):
    // every attempt fails the same way, so a PUT was retried as a network failure until its
    // deadline (DeadlineError after 6 attempts in 3 s) instead of failing with undici's error.
    const { server, dispatcher, giveUps } = await setup(() => ({ status: 200 }), { deadlineMs: 3_000 })
    // 'héllo' is 5 characters but 6 bytes: the commonest way to get content-length wrong.
    await expect(request(`${server.url}/`, { dispatcher, method: 'PUT', body: 'héllo', headers: { 'content-length': '5' } })).rejects.toMatchObject({
      code: 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
    })
    await expect(request(`${server.url}/`, { dispatcher, method: 'PUT', body: 'x', headers: { expect: '100-continue' } })).rejects.toMatchObject({
      code: 'UND_ERR_NOT_SUPPORTED',
    })
    expect(server.received).toHaveLength(0)
    expect(giveUps.map((e) => e.reason)).toEqual(['invalid-request', 'invalid-request'])
  })

  it('a network failure is retried for GET but not for POST', async () => {
    const dropFirst = (n: number): Reply => (n === 1 ? { status: 0, destroy: true } : { status: 200, body: 'fine' })
    const get = await setup(dropFirst, { errorBackoffBaseMs: 1 })
    const res = await request(`${get.server.url}/`, { dispatcher: get.dispatcher })
    expect(await res.body.text()).toBe('fine')
    expect(get.server.received).toHaveLength(2)

    const post = await setup(dropFirst, { errorBackoffBaseMs: 1 })
    await expect(request(`${post.server.url}/`, { dispatcher: post.dispatcher, method: 'POST', body: 'x' })).rejects.toThrow()
    expect(post.server.received).toHaveLength(1)
    expect(post.giveUps.map((e) => e.reason)).toEqual(['unsafe-to-retry'])
  })

  it('a POST with an Idempotency-Key is retried after a network failure', async () => {
    const { server, dispatcher } = await setup((n) => (n === 1 ? { status: 0, destroy: true } : { status: 200 }), {
      errorBackoffBaseMs: 1,
    })
    const res = await request(`${server.url}/`, {
      dispatcher,
      method: 'POST',
      body: 'x',
      headers: { 'Idempotency-Key': 'abc' },
    })
    await res.body.dump()
    expect(res.statusCode).toBe(200)
    expect(server.received).toHaveLength(2)
  })

  it('drains a large discarded body by dropping the connection, and still retries', async () => {
    const big = 'x'.repeat(200_000)
    const { server, dispatcher } = await setup(throttleFirst(1, { status: 429, body: big }), { discardMaxBytes: 1024 })
    const res = await request(`${server.url}/`, { dispatcher })
    expect(await res.body.text()).toBe('ok 2')
  })

  it('lets the caller read a large final body with back-pressure', async () => {
    const big = 'y'.repeat(1_000_000)
    const { server, dispatcher } = await setup((n) => (n === 1 ? { status: 429 } : { status: 200, body: big }))
    const res = await request(`${server.url}/`, { dispatcher })
    const chunks: Buffer[] = []
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer)
      // A slow consumer: undici pauses the socket meanwhile.
      await new Promise((r) => setImmediate(r))
    }
    expect(Buffer.concat(chunks).toString()).toBe(big)
  })

  it('gives each origin its own lane', async () => {
    const a = await setup(throttleFirst(1))
    const b = await startScriptedServer(() => ({ status: 200 }))
    cleanups.push(() => b.close())
    await (await request(`${a.server.url}/`, { dispatcher: a.dispatcher })).body.dump()
    await (await request(`${b.url}/`, { dispatcher: a.dispatcher })).body.dump()
    const stats = a.limiter.stats()
    expect(stats.map((s) => [s.scope, s.throttled]).sort()).toEqual([[a.server.url, 1], [b.url, 0]].sort())
  })
})

describe.each(SHELLS)('%s with undici.fetch', (shell) => {
  const setup = (script: (n: number) => Reply, options: PoliteOptions = {}) => setupShell(shell, script, options)

  it('retries a 429 and resolves with the final Response', async () => {
    const { server, dispatcher, limiter } = await setup(throttleFirst(2))
    const res = await undiciFetch(`${server.url}/items`, { dispatcher })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-answer')).toBe('3')
    expect(await res.text()).toBe('ok 3')
    expect(limiter.stats()[0]).toMatchObject({ attempts: 3, throttled: 2 })
  })

  it('an abort during the lane wait rejects with the abort reason', async () => {
    const { server, dispatcher, limiter } = await setup(() => ({ status: 429, headers: { 'retry-after': '20' } }))
    const controller = new AbortController()
    limiter.on('retry', () => setImmediate(() => controller.abort()))
    await expect(undiciFetch(`${server.url}/`, { dispatcher, signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    })
    expect(server.received).toHaveLength(1)
  })

  it('fetch streams request bodies: a POST body is read once and replayed byte for byte', async () => {
    const { server, dispatcher, giveUps } = await setup(throttleFirst(1))
    const body = JSON.stringify({ model: 'm', input: 'héllo €' })
    const res = await undiciFetch(`${server.url}/`, { dispatcher, method: 'POST', body, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    expect(server.received.map((r) => r.body)).toEqual([body, body])
    expect(giveUps).toEqual([])
  })
})

describe.each(SHELLS)("%s with giveUp: 'response'", (shell) => {
  const setup = (script: (n: number) => Reply, options: PoliteOptions = {}) => setupShell(shell, script, { giveUp: 'response', ...options })
  const tooLong = { status: 429, headers: { 'retry-after': '120', 'x-should-retry': 'true', 'x-vendor': 'kept' }, body: '{"error":"rate"}' }

  it('a too-long Retry-After hands the caller the 429 itself, headers and body intact, plus the give-up fields', async () => {
    const { server, dispatcher, giveUps } = await setup(() => tooLong)
    const res = await request(`${server.url}/`, { dispatcher, method: 'POST', body: 'payload' })
    expect(res.statusCode).toBe(429)
    expect(res.headers['retry-after']).toBe('120')
    expect(res.headers['x-vendor']).toBe('kept')
    expect(res.headers['x-should-retry']).toBe('false')
    expect(res.headers['x-polite-fetch-give-up']).toMatch(/^retry-after-too-long; retry-at="\d{4}-.*Z"$/)
    expect(await res.body.text()).toBe('{"error":"rate"}')
    expect(server.received).toHaveLength(1)
    expect(giveUps.map((e) => e.reason)).toEqual(['retry-after-too-long'])
  })

  it('through fetch: the Response of the 429, readable', async () => {
    const { server, dispatcher } = await setup(() => tooLong, { retryBudget: 0, maxRetryAfterMs: 1_000_000 })
    const res = await undiciFetch(`${server.url}/`, { dispatcher })
    expect(res.status).toBe(429)
    expect(res.headers.get('x-polite-fetch-give-up')).toMatch(/^retry-budget; retry-at=/)
    expect(await res.text()).toBe('{"error":"rate"}')
  })

  it('a deadline decided at the response keeps the body', async () => {
    const { server, dispatcher } = await setup(() => ({ status: 503, headers: { 'retry-after': '1' }, body: 'busy' }), { deadlineMs: 500 })
    const res = await request(`${server.url}/`, { dispatcher })
    expect(res.statusCode).toBe(503)
    expect(res.headers['x-polite-fetch-give-up']).toMatch(/^deadline; retry-at=/)
    expect(await res.body.text()).toBe('busy')
  })

  it('a deadline during the retry answers with the last 503 (its body was drained for the retry) and cancels the retry', async () => {
    let release: () => void = () => {}
    const hold = new Promise<void>((resolve) => (release = resolve))
    cleanups.push(async () => release())
    const { server, dispatcher } = await setup(
      (n) => (n === 1 ? { status: 503, headers: { 'retry-after-ms': '50', 'x-n': '1' }, body: 'busy' } : { status: 200, holdUntil: hold }),
      { deadlineMs: 400 },
    )
    const started = performance.now()
    const res = await request(`${server.url}/`, { dispatcher })
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(res.statusCode).toBe(503)
    expect(res.headers['x-n']).toBe('1')
    expect(res.headers['x-polite-fetch-give-up']).toBe('deadline')
    expect(await res.body.text()).toBe('')
    expect(server.received).toHaveLength(2)
  })

  it('a call the gate puts past its deadline gets the gating 429 (head only, never sent); a network failure still rejects', async () => {
    const { server, dispatcher } = await setup(
      (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '30', 'x-n': '1' }, body: 'first' } : { status: 500, destroy: true }),
      { deadlineMs: 5_000 },
    )
    const first = await request(`${server.url}/`, { dispatcher })
    expect(first.statusCode).toBe(429)
    expect(await first.body.text()).toBe('first')
    const gated = await request(`${server.url}/`, { dispatcher, method: 'POST', body: 'x' })
    expect(gated.statusCode).toBe(429)
    expect(gated.headers['x-n']).toBe('1')
    expect(gated.headers['x-polite-fetch-give-up']).toMatch(/^deadline; retry-at=/)
    expect(await gated.body.text()).toBe('')
    const viaFetch = await undiciFetch(`${server.url}/`, { dispatcher })
    expect(viaFetch.status).toBe(429)
    expect(server.received).toHaveLength(1)
  })
})

describe('option names', () => {
  it('every Node shell rejects a misspelt option, naming the one it was meant to be', async () => {
    const { install } = await import('../../src/node/install.js')
    expect(() => politeInterceptor({ deadlinMs: 5000 } as never)).toThrow(/politeInterceptor has no option `deadlinMs`; did you mean `deadlineMs`\?/)
    expect(() => politeAgent({ discardMaxByte: 1 } as never)).toThrow(/politeAgent has no option `discardMaxByte`; did you mean `discardMaxBytes`\?/)
    expect(() => install({ dispatch: new Agent() } as never)).toThrow(/install has no option `dispatch`; did you mean `dispatcher`\?/)
    // Their own options are known: a dispatcher, an agent's options, the shared ones.
    const agent = politeAgent({ agent: { connections: 1 }, discardMaxBytes: 1, maxBodyBytes: 10, deadlineMs: 1000, strategy: none() })
    cleanups.push(() => agent.close())
  })
})
