// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest'
import { none } from '../../src/core/pacers/index.js'
import { memoryStore } from '../../src/storage/memory-store.js'
import { registerPoliteFetch, type PoliteFetchRegistration } from '../../src/register/index.js'
import { CALL_HEADER, PAGE_MESSAGE } from '../../src/protocol/worker-messages.js'
import { CALL_OPTIONS_HEADER, readCallOptions } from '../../src/protocol/call-options.js'
import { fakeServiceWorker } from './fake-service-worker.js'

const API = 'https://api.example'
let open: PoliteFetchRegistration[] = []

function useServiceWorker(fake: ReturnType<typeof fakeServiceWorker> | undefined) {
  vi.stubGlobal('navigator', Object.assign(Object.create(navigator) as Navigator, { serviceWorker: fake?.container }))
}

function register(options: Parameters<typeof registerPoliteFetch>[1] = {}) {
  const registration = registerPoliteFetch('/sw.js?api=x', options)
  open.push(registration)
  return registration
}

afterEach(() => {
  for (const r of open) r.close()
  open = []
  vi.unstubAllGlobals()
})

describe('registerPoliteFetch without service workers', () => {
  it('falls back to an in-page client with the same API', async () => {
    useServiceWorker(undefined)
    const upstream = vi.fn(async () => new Response('ok', { status: 200 }))
    const polite = register({ inPage: { fetch: upstream, strategy: none() } })
    expect(polite.mode).toBe('in-page')
    await expect(polite.ready).resolves.toBe('in-page')
    const attempts: unknown[] = []
    polite.on('attempt', (detail) => attempts.push(detail))
    const response = await polite.fetch(`${API}/items`)
    expect(response.status).toBe(200)
    expect(upstream).toHaveBeenCalledTimes(1)
    expect(attempts).toEqual([expect.objectContaining({ scope: API, attempt: 1 })])
    const stats = await polite.stats()
    expect(stats.mode).toBe('in-page')
    expect(stats.stats).toEqual([expect.objectContaining({ scope: API, attempts: 1 })])
  })

  it('shares its lane with the other tabs by default, and says which tab leads', async () => {
    useServiceWorker(undefined)
    const polite = register({ inPage: { fetch: async () => new Response('ok'), store: memoryStore() } })
    await polite.fetch(`${API}/items`)
    const stats = await polite.stats()
    expect(stats.tabs?.shared).toBe(true)
    expect(stats.tabs?.leaders).toEqual({ [API]: stats.tabs?.tabId }) // the only tab leads
    expect(stats.stats).toEqual([expect.objectContaining({ scope: API, attempts: 1 })])
  })

  it('keeps its lane to itself with shareTabs: false', async () => {
    useServiceWorker(undefined)
    const polite = register({ shareTabs: false, inPage: { fetch: async () => new Response('ok') } })
    await polite.fetch(`${API}/items`)
    expect((await polite.stats()).tabs).toEqual({ shared: false, tabId: '', leaders: {} })
  })

  it('reports, instead of throwing, a listener for an event the limiter does not emit', async () => {
    useServiceWorker(undefined)
    const errors: unknown[] = []
    const polite = register({ onError: (e) => errors.push(e) })
    expect(() => polite.on('no-such-event', () => {})).not.toThrow()
    expect(errors).toHaveLength(1)
  })
})

describe('registerPoliteFetch with a service worker', () => {
  it('registers the script (classic by default, module when asked) and waits for control', async () => {
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const polite = register({ workerType: 'module', workerScope: '/' })
    expect(polite.mode).toBe('worker')
    await expect(polite.ready).resolves.toBe('worker')
    expect(fake.registered).toEqual([{ url: new URL('/sw.js?api=x', location.href).href, init: { scope: '/', type: 'module' } }])
  })

  it('routes fetch through the page’s own fetch, which the worker intercepts', async () => {
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const pageFetch = vi.fn(async () => new Response('from worker', { headers: { 'x-polite-fetch': 'paced' } }))
    vi.stubGlobal('fetch', pageFetch)
    const polite = register({ inPage: { fetch: () => Promise.reject(new Error('in-page client used')) } })
    const response = await polite.fetch(`${API}/items`)
    expect(await response.text()).toBe('from worker')
    expect(pageFetch).toHaveBeenCalledWith(`${API}/items`, undefined)
  })

  it('names a call that has a signal, and tells the worker when it aborts (Chromium does not)', async () => {
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    let sent: Headers | undefined
    const pageFetch = vi.fn((_input: unknown, init?: RequestInit) => {
      sent = new Headers(init?.headers)
      return new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)))
    })
    vi.stubGlobal('fetch', pageFetch)
    const polite = register()
    await polite.ready
    await vi.waitFor(() => expect(fake.registered).toHaveLength(1))
    const controller = new AbortController()
    // The worker's features are learned once it controls the page.
    await vi.waitFor(async () => {
      void polite.fetch(`${API}/warm`, { signal: new AbortController().signal })
      expect(sent?.get(CALL_HEADER)).toBeTruthy()
    })
    const call = polite.fetch(`${API}/items`, { method: 'POST', body: 'x', signal: controller.signal, headers: { 'x-app': '1' } })
    await vi.waitFor(() => expect(sent!.get('x-app')).toBe('1')) // polite.fetch waits for ready first
    const name = sent!.get(CALL_HEADER)!
    controller.abort()
    await expect(call).rejects.toMatchObject({ name: 'AbortError' })
    await vi.waitFor(() => expect(fake.aborted).toEqual([name]))
    // Without a signal, nothing is added.
    void polite.fetch(`${API}/plain`)
    await vi.waitFor(() => expect(pageFetch).toHaveBeenLastCalledWith(`${API}/plain`, undefined))
  })

  it('names no call for a worker that does not say it reads the name (an older version)', async () => {
    const fake = fakeServiceWorker({ noAbort: true })
    useServiceWorker(fake)
    const pageFetch = vi.fn(async (_input: unknown, _init?: RequestInit) => new Response('ok'))
    vi.stubGlobal('fetch', pageFetch)
    const polite = register()
    await polite.ready
    await polite.stats() // the features are known once a stats reply came back
    const init = { signal: new AbortController().signal }
    await polite.fetch(`${API}/items`, init)
    expect(pageFetch).toHaveBeenLastCalledWith(`${API}/items`, init)
  })

  it('carries the per-call options to a worker that reads them, from the first call on', async () => {
    // Before, a plain fetch: the worker never saw them and paced the call with its own defaults.
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const sent: { input: unknown; init: RequestInit | undefined }[] = []
    vi.stubGlobal('fetch', vi.fn(async (input: unknown, init?: RequestInit) => (sent.push({ input, init }), new Response('ok'))))
    const polite = register()
    await polite.ready
    // Not waited for by the test: the call itself waits for the worker to say what it reads.
    const politeFetch = { deadlineMs: 5_000, scope: 'reports', priority: 2, cost: 3, retryBudget: 0, other: 'x' }
    await polite.fetch(`${API}/items`, { method: 'POST', body: 'b', headers: { 'x-app': '1' }, politeFetch })
    expect(sent).toHaveLength(1)
    const { input, init } = sent[0]!
    expect(input).toBe(`${API}/items`)
    const headers = new Headers(init?.headers)
    expect(readCallOptions(headers.get(CALL_OPTIONS_HEADER))).toEqual({ deadlineMs: 5_000, scope: 'reports', priority: 2, cost: 3, retryBudget: 0 })
    expect(headers.get('x-app')).toBe('1')
    expect(headers.get(CALL_HEADER)).toBeNull() // no signal: nothing to abort
    expect(init).toMatchObject({ method: 'POST', body: 'b' })
    expect(init).not.toHaveProperty('politeFetch')
  })

  it('never sends per-call options to a worker that does not say it reads them (an older version), and says so once', async () => {
    const fake = fakeServiceWorker({ noCallOptions: true })
    useServiceWorker(fake)
    const pageFetch = vi.fn(async (_input: unknown, _init?: RequestInit) => new Response('ok'))
    vi.stubGlobal('fetch', pageFetch)
    const errors: unknown[] = []
    const polite = register({ onError: (error) => errors.push(error) })
    await polite.ready
    const init = { politeFetch: { deadlineMs: 5_000 } }
    await polite.fetch(`${API}/items`, init)
    await polite.fetch(`${API}/items`, init)
    expect(pageFetch).toHaveBeenLastCalledWith(`${API}/items`, init)
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toMatch(/does not say it reads per-call options.*deadlineMs/)
  })

  it('makes the body of a politeFetch.body factory once, and the worker replays it', async () => {
    // Before, the factory was never called in worker mode: the POST went out without a body.
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const pageFetch = vi.fn(async (_input: unknown, _init?: RequestInit) => new Response('ok'))
    vi.stubGlobal('fetch', pageFetch)
    const polite = register()
    await polite.ready
    const body = vi.fn(() => 'made')
    await polite.fetch(`${API}/upload`, { method: 'POST', body: 'ignored', politeFetch: { body } })
    expect(body).toHaveBeenCalledTimes(1)
    expect(pageFetch.mock.calls[0]![1]).toMatchObject({ method: 'POST', body: 'made' })
    // As in-page: a factory that throws rejects the call with its error, and nothing is sent.
    const failure = new Error('no file')
    await expect(polite.fetch(`${API}/upload`, { method: 'POST', politeFetch: { body: () => { throw failure } } })).rejects.toBe(failure)
    expect(pageFetch).toHaveBeenCalledTimes(1)
  })

  it('reads the worker’s stats over the message protocol', async () => {
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const polite = register()
    await polite.ready
    await expect(polite.stats()).resolves.toEqual({
      mode: 'worker',
      stats: [{ scope: 'https://api.example', ratePerSecond: 4, attempts: 9 }],
      worker: { instanceId: 'worker-1', startedAt: 1 },
    })
  })

  it('delivers the worker’s limiter events to listeners, until they unsubscribe', async () => {
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const polite = register()
    const seen: unknown[] = []
    const off = polite.on('throttled', (detail) => seen.push(detail)) // before ready: sent once the worker controls
    await polite.ready
    await vi.waitFor(() => expect(fake.limiter.listeners.get('throttled')).toHaveLength(1))
    fake.limiter.emit('throttled', { scope: API, status: 429 })
    await vi.waitFor(() => expect(seen).toEqual([{ scope: API, status: 429 }]))
    off()
    await new Promise((resolve) => setTimeout(resolve, 10))
    fake.limiter.emit('throttled', { scope: API, status: 429 })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(seen).toHaveLength(1)
  })

  it('subscribes again when the page comes back from the back/forward cache', async () => {
    // The worker does not see a cached page (clients.get), so it forgot it at its next event or restart.
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const polite = register()
    polite.on('throttled', () => {})
    await polite.ready
    await vi.waitFor(() => expect(fake.limiter.listeners.get('throttled')).toHaveLength(1))
    const worker = fake.container.controller!
    const posted: unknown[] = []
    const post = worker.postMessage.bind(worker)
    worker.postMessage = (message) => {
      posted.push(message)
      post(message)
    }
    window.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: false }))
    expect(posted).toEqual([])
    window.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: true }))
    expect(posted).toEqual([{ type: PAGE_MESSAGE.subscribe, events: ['throttled'] }])
  })

  it('tells the worker to stop sending events when it closes', async () => {
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const polite = register()
    polite.on('throttled', () => {})
    await polite.ready
    await vi.waitFor(() => expect(fake.limiter.listeners.get('throttled')).toHaveLength(1))
    polite.close()
    await new Promise((resolve) => setTimeout(resolve, 10))
    fake.limiter.emit('throttled', { scope: API, status: 429 })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(fake.toPage).toEqual([])
  })

  it('rejects stats after messageTimeoutMs when the worker does not answer', async () => {
    const fake = fakeServiceWorker({ silent: true })
    useServiceWorker(fake)
    const polite = register({ messageTimeoutMs: 20 })
    await polite.ready
    await expect(polite.stats()).rejects.toThrow(/timed out/)
  })

  it('falls back in-page when registration fails', async () => {
    useServiceWorker(fakeServiceWorker({ failRegister: new Error('SecurityError') }))
    const errors: unknown[] = []
    const upstream = vi.fn(async () => new Response('in page'))
    const polite = register({ onError: (e) => errors.push(e), inPage: { fetch: upstream, store: memoryStore() } })
    await expect(polite.ready).resolves.toBe('in-page')
    expect(polite.mode).toBe('in-page')
    expect(await (await polite.fetch(`${API}/x`)).text()).toBe('in page')
    expect(errors).toEqual([new Error('SecurityError')])
  })

  it('falls back in-page when the worker never takes control', async () => {
    // Still activating: its clients.claim() may yet take this page, so the page waits for it.
    useServiceWorker(fakeServiceWorker({ neverControl: true, state: 'activating' }))
    const started = Date.now()
    const polite = register({ controlTimeoutMs: 50 })
    await expect(polite.ready).resolves.toBe('in-page')
    expect(Date.now() - started).toBeGreaterThanOrEqual(45)
  })

  it('falls back at once when the active worker does not control the page (a hard reload), and paces in the worker’s lane', async () => {
    const fake = fakeServiceWorker({ neverControl: true })
    useServiceWorker(fake)
    const upstream = vi.fn(async () => new Response('sent by the page'))
    const polite = register({ controlTimeoutMs: 60_000, inPage: { fetch: upstream, store: memoryStore() } })
    await expect(polite.ready).resolves.toBe('in-page')
    const response = await polite.fetch(`${API}/items`)
    expect(await response.text()).toBe('sent by the page')
    expect(upstream).toHaveBeenCalledTimes(1)
    expect(fake.lanes.stats()).toEqual([expect.objectContaining({ scope: API, attempts: 1, successes: 1 })])
    const stats = await polite.stats()
    expect(stats.tabs?.leaders).toEqual({ [API]: 'service-worker' })
    expect(stats.stats).toEqual([expect.objectContaining({ scope: API, attempts: 1 })])
  })

  it('stays in-page when forced, without registering', async () => {
    const fake = fakeServiceWorker()
    useServiceWorker(fake)
    const polite = register({ forceInPage: true })
    await expect(polite.ready).resolves.toBe('in-page')
    expect(fake.registered).toEqual([])
  })
})
