import 'fake-indexeddb/auto'
import { afterEach, describe, expect, it } from 'vitest'
import { PACED_HEADER } from '../../src/client/fetch-job.js'
import { atb, none } from '../../src/core/pacers/index.js'
import { idbStore } from '../../src/storage/idb-store.js'
import { installPoliteFetch, type PoliteFetchWorker } from '../../sw/install-polite-fetch.js'
import { CALL_HEADER, PAGE_MESSAGE, WORKER_MESSAGE, type WorkerMessage } from '../../src/protocol/worker-messages.js'
import { CALL_OPTIONS_HEADER, writeCallOptions } from '../../src/protocol/call-options.js'
import { createClient } from '../../src/client/create-client.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'
import { fakeWorkerGlobal } from './fake-worker-global.js'

const API = 'https://api.example'
const ok = () => new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } })
const throttled = (headers: Record<string, string> = {}) => new Response('{"error":"slow down"}', { status: 429, headers })
/** A Request the constructor refuses to build (mode navigate). */
const navigation = (url: string) => ({ url, mode: 'navigate', cache: 'default', method: 'GET' }) as unknown as Request

let installed: PoliteFetchWorker[] = []
afterEach(async () => {
  await Promise.all(installed.map((w) => w.close()))
  installed = []
})

function install(fake: ReturnType<typeof fakeWorkerGlobal>, options: Partial<Parameters<typeof installPoliteFetch>[0]> = {}) {
  const worker = installPoliteFetch({ match: API, store: false, strategy: none(), globalScope: fake.scope, ...options })
  installed.push(worker)
  return worker
}

let dbCounter = 0

describe('installPoliteFetch', () => {
  it('answers a matched request with the final response, marked paced, after retrying a 429', async () => {
    const answers = [throttled({ 'retry-after': '0' }), ok()]
    const fake = fakeWorkerGlobal(() => answers.shift() ?? ok())
    install(fake)
    const { response } = fake.fetch(new Request(`${API}/items`))
    expect(response).toBeDefined()
    const final = await response!
    expect(final.status).toBe(200)
    expect(final.headers.get(PACED_HEADER)).toBe('paced')
    expect(await final.json()).toEqual({ ok: true })
    expect(fake.calls.upstream).toHaveLength(2)
  })

  it('lets navigations, no-cors and unmatched requests pass untouched', () => {
    const fake = fakeWorkerGlobal(ok)
    install(fake)
    expect(fake.fetch(navigation(`${API}/`)).response).toBeUndefined()
    expect(fake.fetch(new Request(`${API}/img.png`, { mode: 'no-cors' })).response).toBeUndefined()
    expect(fake.fetch(new Request('https://app.example/main.js')).response).toBeUndefined()
    expect(fake.calls.upstream).toHaveLength(0)
  })

  it('gives up with a 503 problem and Retry-After when the server asks for too long a wait', async () => {
    const fake = fakeWorkerGlobal(() => throttled({ 'retry-after': '3600' }))
    install(fake)
    const response = await fake.fetch(new Request(`${API}/items`)).response!
    expect(response.status).toBe(503)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(3599)
    expect(response.headers.get(PACED_HEADER)).toBe('paced')
    const problem = (await response.json()) as Record<string, unknown>
    expect(problem['reason']).toBe('retry-after-too-long')
    expect(problem['status']).toBe(503)
    expect(problem['instance']).toBe(`${API}/items`)
  })

  it("with giveUp: 'response' hands the page the server's own 429, marked paced and with the give-up fields", async () => {
    const fake = fakeWorkerGlobal(() => throttled({ 'retry-after': '3600', 'x-vendor': 'kept' }))
    install(fake, { giveUp: 'response' })
    const response = await fake.fetch(new Request(`${API}/items`)).response!
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('3600')
    expect(response.headers.get('x-vendor')).toBe('kept')
    expect(response.headers.get(PACED_HEADER)).toBe('paced')
    expect(response.headers.get('x-polite-fetch-give-up')).toMatch(/^retry-after-too-long; retry-at=/)
    expect(response.headers.get('x-should-retry')).toBe('false')
    expect(await response.json()).toEqual({ error: 'slow down' })
    expect(fake.calls.upstream).toHaveLength(1)
  })

  it("the synthetic 503 of 'throw' carries the give-up fields too", async () => {
    const fake = fakeWorkerGlobal(() => throttled({ 'retry-after': '3600' }))
    install(fake)
    const response = await fake.fetch(new Request(`${API}/items`)).response!
    expect(response.status).toBe(503)
    expect(response.headers.get('x-polite-fetch-give-up')).toMatch(/^retry-after-too-long; retry-at=/)
    expect(response.headers.get('x-should-retry')).toBe('false')
  })

  it('gives up with reason budget when the retry budget is spent', async () => {
    const fake = fakeWorkerGlobal(() => throttled())
    install(fake, { retryBudget: 0 })
    const response = await fake.fetch(new Request(`${API}/items`)).response!
    expect(response.status).toBe(503)
    expect(((await response.json()) as { reason: string }).reason).toBe('budget')
    // The header names it as a `giveUp: 'response'` answer does (the limiter's reason), so one reader reads both.
    expect(response.headers.get('x-polite-fetch-give-up')).toBe('retry-budget')

    const answered = fakeWorkerGlobal(() => throttled())
    install(answered, { retryBudget: 0, giveUp: 'response' })
    const own = await answered.fetch(new Request(`${API}/items`)).response!
    expect(own.status).toBe(429)
    expect(own.headers.get('x-polite-fetch-give-up')).toBe('retry-budget')
  })

  it('sends a body larger than maxBodyBytes whole, not streamed, and replays it after a 429', async () => {
    // Chromium refuses a streamed upload over HTTP/1.1, so a body the worker turned into a
    // stream failed there ("Failed to fetch") where the page's own fetch would have worked.
    const answers = [throttled({ 'retry-after': '0' }), ok()]
    const inits: (RequestInit | undefined)[] = []
    const fake = fakeWorkerGlobal(() => answers.shift() ?? ok())
    const upstreamFetch = fake.scope.fetch
    fake.scope.fetch = (input, init) => {
      inits.push(init)
      return upstreamFetch(input, init)
    }
    install(fake, { maxBodyBytes: 4 })
    const body = 'more than four bytes'
    const request = new Request(`${API}/upload`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } })
    const response = await fake.fetch(request).response!
    expect(response.status).toBe(200)
    expect(fake.calls.upstream).toHaveLength(2)
    for (const sent of fake.calls.upstream) {
      expect(await sent.text()).toBe(body)
      expect(sent.headers.get('content-type')).toBe('text/plain')
    }
    for (const init of inits) expect(init?.body).not.toBeInstanceOf(ReadableStream)
  })

  it("hands a redirect: 'manual' request its opaque redirect at once, as fetch would", async () => {
    // fetch resolves with status 0 only for a filtered response (here the server's 302, hidden):
    // an answer, not a network error, so it is final. It used to be retried as an error until
    // the deadline (14 attempts, then a 503 after 58 s).
    const clock = new ManualClock()
    const opaqueRedirect = { status: 0, type: 'opaqueredirect', statusText: '', headers: new Headers(), body: null } as unknown as Response
    const fake = fakeWorkerGlobal(() => opaqueRedirect)
    install(fake, { clock })
    let answer: Response | undefined
    void fake.fetch(new Request(`${API}/login`, { redirect: 'manual' })).response!.then((response) => (answer = response))
    await clock.advance(0)
    expect(answer).toBe(opaqueRedirect)
    expect(fake.calls.upstream).toHaveLength(1)
  })

  it("ends a page's call when the page says it aborted: Chromium never aborts the FetchEvent's request.signal", async () => {
    const clock = new ManualClock()
    const answers = [throttled({ 'retry-after': '10' })]
    const fake = fakeWorkerGlobal(() => answers.shift() ?? ok())
    install(fake, { clock })
    const gated = fake.fetch(new Request(`${API}/a`)).response! // its 429 gates the lane for 10 s
    await clock.advance(0)
    const call = (id: string, path: string) =>
      fake.fetch(new Request(`${API}/${path}`, { method: 'POST', body: 'x', headers: { [CALL_HEADER]: id } })).response!.then(
        (response) => response.status,
        (error: DOMException) => error.name,
      )
    const abort = (id: string) => fake.extendable('message', { data: { type: PAGE_MESSAGE.abort, call: id }, source: { id: 'p', postMessage() {} } })
    const waiting = call('call-1', 'b')
    await clock.advance(100)
    await abort('call-1')
    // The abort can reach the worker before the request it ends does (two channels).
    await abort('call-2')
    const early = call('call-2', 'c')
    expect(await waiting).toBe('AbortError')
    expect(await early).toBe('AbortError')
    await clock.advance(20_000)
    expect((await gated).status).toBe(200)
    // The aborted POSTs never went out.
    expect(fake.calls.upstream.map((request) => new URL(request.url).pathname)).toEqual(['/a', '/a'])
  })

  it('sends a page call on without its call header, and forwards one it does not pace without it too', async () => {
    const fake = fakeWorkerGlobal(ok)
    install(fake)
    const headers = { [CALL_HEADER]: 'call-1', 'x-app': 'kept' }
    expect((await fake.fetch(new Request(`${API}/paced`, { headers })).response!).status).toBe(200)
    const other = fake.fetch(new Request('https://elsewhere.example/x', { method: 'PUT', body: 'b', headers }))
    expect(other.response).toBeDefined()
    expect((await other.response!).headers.get(PACED_HEADER)).toBeNull()
    expect(fake.calls.upstream).toHaveLength(2)
    for (const request of fake.calls.upstream) {
      expect(request.headers.get(CALL_HEADER)).toBeNull()
      expect(request.headers.get('x-app')).toBe('kept')
    }
    expect(await fake.calls.upstream[1]!.text()).toBe('b')
    // Without the header, a request the worker does not pace is not touched at all.
    expect(fake.fetch(new Request('https://elsewhere.example/y')).response).toBeUndefined()
  })

  it('applies the per-call options a page carries (CALL_OPTIONS_HEADER) and sends the request on without them', async () => {
    // Before, the worker paced such a call as any other: lane https://api.example, cost 1, its deadline and budget.
    const strategy = recordingStrategy()
    const answers = [throttled({ 'retry-after': '0' })]
    const fake = fakeWorkerGlobal(() => answers.shift() ?? ok())
    const worker = install(fake, { strategy, cost: () => 7 })
    const politeFetch = { scope: 'reports', cost: 3, retryBudget: 0, deadlineMs: 5_000, priority: 1 }
    const headers = { [CALL_OPTIONS_HEADER]: writeCallOptions(politeFetch)!, 'x-app': 'kept' }
    const response = await fake.fetch(new Request(`${API}/items`, { headers })).response!
    // retryBudget 0: its 429 is not retried (the worker's budget is Infinity).
    expect(response.status).toBe(503)
    expect(response.headers.get('x-polite-fetch-give-up')).toMatch(/^retry-budget\b/)
    expect(worker.client.stats().map((lane) => lane.scope)).toEqual(['reports'])
    expect(strategy.pacers[0]!.calls.filter((c) => c.method === 'onSend').map((c) => c.cost)).toEqual([3])
    expect(fake.calls.upstream).toHaveLength(1)
    expect(fake.calls.upstream[0]!.headers.get(CALL_OPTIONS_HEADER)).toBeNull()
    expect(fake.calls.upstream[0]!.headers.get('x-app')).toBe('kept')
  })

  it("gives up at a page call's deadlineMs as the page's own client does, with its message", async () => {
    // A 429 gates the lane for 10 s; a call with a 5 s deadline cannot make it. In-page it rejects at
    // once with a DeadlineError; through the worker it waited for the worker's deadline (60 s), went
    // out at 10 s and got a 200.
    const run = async (send: (path: string, politeFetch?: object) => Promise<unknown>, clock: ManualClock) => {
      const gated = send('/a')
      await clock.advance(0)
      let outcome: unknown = 'pending'
      void send('/b', { deadlineMs: 5_000 }).then((value) => (outcome = value), (error: Error) => (outcome = error))
      await clock.advance(0)
      const atOnce = outcome
      await clock.advance(20_000)
      await gated
      return atOnce
    }
    const answers = () => {
      const list = [throttled({ 'retry-after': '10' })]
      return async () => list.shift() ?? ok()
    }
    const pageClock = new ManualClock()
    const page = createClient({ fetch: answers(), strategy: none(), clock: pageClock, jitterRatio: 0 })
    const inPage = await run((path, politeFetch) => page.fetch(`${API}${path}`, politeFetch && { politeFetch }), pageClock)
    await page.close()
    expect(inPage).toMatchObject({ name: 'DeadlineError' })

    const workerClock = new ManualClock()
    const fake = fakeWorkerGlobal(answers())
    install(fake, { clock: workerClock, jitterRatio: 0 })
    const headers = (politeFetch?: object): Record<string, string> => (politeFetch ? { [CALL_OPTIONS_HEADER]: writeCallOptions(politeFetch)! } : {})
    const viaWorker = await run((path, politeFetch) => fake.fetch(new Request(`${API}${path}`, { headers: headers(politeFetch) })).response!, workerClock)
    expect(viaWorker).toBeInstanceOf(Response)
    const answer = viaWorker as Response
    expect(answer.status).toBe(503)
    expect(await answer.json()).toMatchObject({ reason: 'deadline', detail: (inPage as Error).message })
    expect(fake.calls.upstream.map((request) => new URL(request.url).pathname)).toEqual(['/a', '/a'])
  })

  it('sends first the queued page call with the higher priority', async () => {
    const clock = new ManualClock()
    const answers = [throttled({ 'retry-after': '1' })]
    const fake = fakeWorkerGlobal(() => answers.shift() ?? ok())
    install(fake, { clock, strategy: recordingStrategy({ intervalMs: 100 }) })
    const sent = (path: string, politeFetch?: object) =>
      fake.fetch(new Request(`${API}${path}`, { headers: politeFetch ? { [CALL_OPTIONS_HEADER]: writeCallOptions(politeFetch)! } : {} })).response!
    const calls = [sent('/a')]
    await clock.advance(0)
    calls.push(sent('/low'), sent('/high', { priority: 5 }))
    await clock.advance(5_000)
    await Promise.all(calls)
    const order = fake.calls.upstream.map((request) => new URL(request.url).pathname)
    expect(order.indexOf('/high')).toBeLessThan(order.indexOf('/low'))
  })

  it('reads per-call values as the client does, and what it cannot read as nothing', async () => {
    const strategy = recordingStrategy()
    const fake = fakeWorkerGlobal(ok)
    const worker = install(fake, { strategy, cost: () => 7 })
    const send = async (headers: Record<string, string>) => (await fake.fetch(new Request(`${API}/x`, { headers })).response!).status
    // A cost that is no number costs 1 in the client, not its cost(): the same through the worker.
    expect(await send({ [CALL_OPTIONS_HEADER]: writeCallOptions({ cost: 'three', scope: 5, deadlineMs: -1 })! })).toBe(200)
    // Forged: a key twice, a number the page never writes, unknown keys, garbage.
    expect(await send({ [CALL_OPTIONS_HEADER]: 'scope=a&scope=b&cost=0x10&deadlineMs=&__proto__=1&giveUp=response' })).toBe(200)
    expect(await send({ [CALL_OPTIONS_HEADER]: '%%%' })).toBe(200)
    expect(worker.client.stats().map((lane) => lane.scope)).toEqual([API])
    expect(strategy.pacers[0]!.calls.filter((c) => c.method === 'onSend').map((c) => c.cost)).toEqual([1, 7, 7])
    for (const request of fake.calls.upstream) expect(request.headers.get(CALL_OPTIONS_HEADER)).toBeNull()
  })

  it('forwards a page call it does not pace without its options header', async () => {
    // Before, such a request passed untouched and the header went on to the server.
    const fake = fakeWorkerGlobal(ok)
    install(fake)
    const dispatched = fake.fetch(new Request('https://elsewhere.example/x', { headers: { [CALL_OPTIONS_HEADER]: 'deadlineMs=5000', 'x-app': 'kept' } }))
    expect(dispatched.response).toBeDefined()
    expect((await dispatched.response!).status).toBe(200)
    expect(fake.calls.upstream[0]!.headers.get(CALL_OPTIONS_HEADER)).toBeNull()
    expect(fake.calls.upstream[0]!.headers.get('x-app')).toBe('kept')
  })

  it('rejects like fetch on a network error it will not retry (the page sees a failed fetch)', async () => {
    const fake = fakeWorkerGlobal(() => Promise.reject(new TypeError('network down')))
    install(fake, { retryBudget: 0 })
    await expect(fake.fetch(new Request(`${API}/x`, { method: 'POST', body: 'x' })).response!).rejects.toThrow()
  })

  it('claims open pages on install and activate, unless told not to', async () => {
    const fake = fakeWorkerGlobal(ok)
    install(fake)
    await fake.extendable('install')
    await fake.extendable('activate')
    expect(fake.calls).toMatchObject({ skipWaiting: 1, claim: 1 })

    const quiet = fakeWorkerGlobal(ok)
    install(quiet, { claim: false })
    await quiet.extendable('install')
    await quiet.extendable('activate')
    expect(quiet.calls).toMatchObject({ skipWaiting: 0, claim: 0 })
  })

  it('answers a stats message with the shared client’s stats and its instance', async () => {
    const fake = fakeWorkerGlobal(ok)
    const worker = install(fake)
    await (await fake.fetch(new Request(`${API}/a`)).response!).text()
    const replies: WorkerMessage[] = []
    await fake.extendable('message', { data: { type: PAGE_MESSAGE.stats, id: 1 }, ports: [{ postMessage: (m: WorkerMessage) => replies.push(m) }] })
    expect(replies).toHaveLength(1)
    const reply = replies[0]!
    expect(reply.type).toBe(WORKER_MESSAGE.statsReply)
    if (reply.type !== WORKER_MESSAGE.statsReply) return
    expect(reply.worker).toEqual(worker.info)
    // What a page may send it: call names (abort) and per-call options.
    expect(reply.features).toEqual(['abort', 'call-options'])
    expect(reply.stats).toEqual([expect.objectContaining({ scope: API, attempts: 1, successes: 1 })])
  })

  it('removes its listeners on close', async () => {
    const fake = fakeWorkerGlobal(ok)
    const worker = installPoliteFetch({ match: API, store: false, globalScope: fake.scope })
    expect(fake.listenerCount()).toBe(4)
    await worker.close()
    expect(fake.listenerCount()).toBe(0)
  })

  it('persists the learned pacer state in IndexedDB and a restarted worker resumes from it', async () => {
    const store = idbStore(`polite-fetch-sw-test-${++dbCounter}`)
    const first = fakeWorkerGlobal(() => throttled())
    const worker = installPoliteFetch({ match: API, store, strategy: atb(), retryBudget: 0, globalScope: first.scope })
    expect((await first.fetch(new Request(`${API}/items`)).response!).status).toBe(503)
    const learned = worker.client.stats()[0]!.ratePerSecond
    expect(Number.isFinite(learned)).toBe(true) // a 429 made the lane pace
    await worker.close() // what the browser's stop loses at most: persistIntervalMs of changes

    const saved = (await store.get(`polite-fetch:pacer:${API}`)) as { kind: string; savedAt: number }
    expect(saved.kind).toBe('atb')

    // A new worker instance (the browser restarted it): its lane starts paced, not bursting.
    const second = fakeWorkerGlobal(ok)
    const restarted = install(second, { store, strategy: atb() })
    const pending = second.fetch(new Request(`${API}/items`)).response!
    await new Promise((resolve) => setTimeout(resolve, 50))
    const rate = restarted.client.stats()[0]!.ratePerSecond
    // Restored, not fresh (a fresh lane is unpaced: Infinity). The rate may have grown a
    // little with the wall-clock time since the save, so compare within 10%.
    expect(Number.isFinite(rate)).toBe(true)
    expect(Math.abs(rate - learned) / learned).toBeLessThan(0.1)
    await restarted.close()
    await pending.catch(() => undefined)

    // Without the saved state the same first request is not paced at all.
    const freshGlobal = fakeWorkerGlobal(ok)
    const fresh = install(freshGlobal, { strategy: atb() })
    await (await freshGlobal.fetch(new Request(`${API}/items`)).response!).text()
    expect(fresh.client.stats()[0]!.ratePerSecond).toBe(Infinity)
  })
})
