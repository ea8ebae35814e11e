// `installPoliteFetch` wires ONE limiter client to the worker's events, so every tab
// of the origin shares one lane per quota scope, and persists its pacer state in
// IndexedDB so a worker the browser stopped resumes paced instead of bursting.
import { createClient, type Client } from '../src/client/create-client.js'
import { createLimiter } from '../src/client/create-limiter.js'
import type { ClientOptions } from '../src/client/options.js'
import type { LimiterEventName } from '../src/client/limiter-events.js'
import type { Store } from '../src/core/types.js'
import { idbStore } from '../src/storage/idb-store.js'
import { compileMatch, mustPassThrough, type Match, type RequestPredicate } from './match.js'
import { createMessageHub, type MessageEventLike, type MessageHubOptions } from './message-hub.js'
import { CALL_HEADER, type WorkerInfo } from '../src/protocol/worker-messages.js'
import { CALL_OPTIONS_HEADER, readCallOptions } from '../src/protocol/call-options.js'
import { giveUpResponse, markPaced, toGiveUp } from './respond.js'
import { createPageCalls } from './page-calls.js'
import { requestBlob } from './request-blob.js'
import { createTabBridge } from './tab-bridge.js'
import type { ExtendableEventLike, FetchEventLike, WorkerGlobalLike } from './worker-global.js'

export interface InstallOptions extends Omit<ClientOptions, 'store'> {
  /** Which requests to pace (origin, URL prefix, `/path` prefix, RegExp, predicate, or a list). Required. */
  match: Match
  /**
   * Where each scope's pacer state (and the pages' event subscriptions) is persisted.
   * Default: `idbStore('polite-fetch')`. `false` keeps everything in memory.
   */
  store?: Store | false
  /** Take over open pages at once (`skipWaiting` + `clients.claim`). Default true. */
  claim?: boolean
  /** The worker's global scope (default `self`); tests pass a fake. */
  globalScope?: WorkerGlobalLike
  /** Told about absorbed failures (a throwing predicate, storage errors, a page gone away). */
  onError?: (error: unknown) => void
}

export interface PoliteFetchWorker {
  /** The one client every matched request goes through. */
  readonly client: Client
  /** Would this request be paced? (false for navigations, `no-cors`, unmatched URLs). */
  handles(request: Request): boolean
  readonly info: WorkerInfo
  /** Remove the listeners and close the client (its pacer state is written to the store). */
  close(): Promise<void>
}

function instanceId(): string {
  const crypto = globalThis.crypto
  return typeof crypto?.randomUUID === 'function' ? crypto.randomUUID() : Math.random().toString(36).slice(2)
}

export function installPoliteFetch(options: InstallOptions): PoliteFetchWorker {
  const { match, store: storeOption, claim = true, globalScope, onError, ...clientOptions } = options
  const scope = globalScope ?? (globalThis as unknown as WorkerGlobalLike)
  const report = onError ?? (() => {})
  const store = storeOption === false ? undefined : (storeOption ?? idbStore('polite-fetch', { onError: report }))
  const matches: RequestPredicate = compileMatch(match, scope.location.origin, report)
  const now = () => clientOptions.clock?.now() ?? Date.now()

  const clientInit: ClientOptions = { ...clientOptions }
  // `self.fetch` from the worker never re-enters this worker's own fetch handler.
  clientInit.fetch ??= (input, init) => scope.fetch(input, init)
  if (store) clientInit.store = store
  // The limiter is shared with the pages the worker does not control (tab-bridge.ts).
  const limiter = createLimiter(clientInit)
  const client = createClient({ ...clientInit, limiter })
  const tabs = createTabBridge(limiter, now, report, scope.navigator?.locks)
  const pageCalls = createPageCalls()
  const info: WorkerInfo = { instanceId: instanceId(), startedAt: now() }
  const hubOptions: MessageHubOptions = {
    client: { stats: () => client.stats(), on: (event, listener) => client.on(event as LimiterEventName, listener) },
    clients: scope.clients,
    info,
    now,
    onError: report,
    abortCall: (call) => pageCalls.abort(call),
    callOptions: true,
  }
  if (store) hubOptions.store = store
  if (clientOptions.clock) hubOptions.clock = clientOptions.clock
  const hub = createMessageHub(hubOptions)

  const handles = (request: Request) => !mustPassThrough(request) && matches(request)

  /** Whether the page put headers of ours on the request, which must not reach the server. */
  const marked = (request: Request): boolean => request.headers.has(CALL_HEADER) || request.headers.has(CALL_OPTIONS_HEADER)

  /**
   * What every attempt sends instead of the request's own: the body as a Blob, replayed by every
   * attempt (request-blob.ts); the headers without ours (CALL_HEADER, CALL_OPTIONS_HEADER); for a
   * call the page named, the signal its page's abort message ends (page-calls.ts). Undefined: the
   * request as it is.
   */
  const attemptInit = async (request: Request, call: string | null): Promise<RequestInit | undefined> => {
    const ours = marked(request)
    if (!ours && request.body === null) return undefined
    const init: RequestInit = {}
    if (ours) {
      const headers = new Headers(request.headers)
      headers.delete(CALL_HEADER)
      headers.delete(CALL_OPTIONS_HEADER)
      init.headers = headers
    }
    if (call !== null) init.signal = pageCalls.open(call, request.signal)
    if (request.body !== null) init.body = await requestBlob(request, init.signal ?? request.signal)
    return init
  }

  const answer = async (request: Request, call: string | null): Promise<Response> => {
    try {
      const init = await attemptInit(request, call)
      // The page's `politeFetch`, given to the client as the page gave it to its own: the client's
      // rules for each value (a bad one is the default, or cost 1) hold here as they do in-page.
      const politeFetch = readCallOptions(request.headers.get(CALL_OPTIONS_HEADER))
      // With `giveUp: 'response'` a give-up after a response arrives here as that response.
      return markPaced(await client.fetch(request, politeFetch === undefined ? init : { ...init, politeFetch }))
    } catch (error) {
      const giveUp = toGiveUp(error)
      // Aborts and network errors stay errors: the page's fetch rejects as it would without us.
      if (!giveUp) throw error
      return giveUpResponse(giveUp, request, now(), new URL(request.url).origin !== scope.location.origin)
    } finally {
      if (call !== null) pageCalls.close(call)
    }
  }

  /** A page call the worker does not pace goes on unpaced, without the headers the page meant for us. */
  const forward = async (request: Request, call: string | null): Promise<Response> => {
    try {
      const init = (await attemptInit(request, call)) as RequestInit
      return await scope.fetch(request, init)
    } finally {
      if (call !== null) pageCalls.close(call)
    }
  }

  const onFetch = (event: FetchEventLike) => {
    const request = event.request
    // Navigations are never named (a page cannot set a header on one), nor no-cors requests (the header is not safelisted).
    if (mustPassThrough(request)) return
    const call = request.headers.get(CALL_HEADER)
    if (matches(request)) event.respondWith(answer(request, call))
    else if (marked(request)) event.respondWith(forward(request, call))
  }
  const onMessage = (event: MessageEventLike & ExtendableEventLike) => {
    event.waitUntil(tabs.onMessage(event) ?? hub.onMessage(event))
  }
  const onInstall = (event: ExtendableEventLike) => {
    if (claim) event.waitUntil(scope.skipWaiting())
  }
  const onActivate = (event: ExtendableEventLike) => {
    if (claim) event.waitUntil(scope.clients.claim())
  }

  scope.addEventListener('fetch', onFetch)
  scope.addEventListener('message', onMessage)
  scope.addEventListener('install', onInstall)
  scope.addEventListener('activate', onActivate)

  return {
    client,
    handles,
    info,
    async close() {
      scope.removeEventListener('fetch', onFetch)
      scope.removeEventListener('message', onMessage)
      scope.removeEventListener('install', onInstall)
      scope.removeEventListener('activate', onActivate)
      tabs.close()
      await client.close()
      await limiter.close()
    },
  }
}
