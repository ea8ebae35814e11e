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
import type { WorkerInfo } from '../src/protocol/worker-messages.js'
import { giveUpResponse, markPaced, toGiveUp } from './respond.js'
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
  const info: WorkerInfo = { instanceId: instanceId(), startedAt: now() }
  const hubOptions: MessageHubOptions = {
    client: { stats: () => client.stats(), on: (event, listener) => client.on(event as LimiterEventName, listener) },
    clients: scope.clients,
    info,
    now,
    onError: report,
  }
  if (store) hubOptions.store = store
  if (clientOptions.clock) hubOptions.clock = clientOptions.clock
  const hub = createMessageHub(hubOptions)

  const handles = (request: Request) => !mustPassThrough(request) && matches(request)

  const answer = async (request: Request): Promise<Response> => {
    try {
      // The body as a Blob, replayed by every attempt (request-blob.ts); the request's own
      // method, headers and signal still apply.
      const init = request.body === null ? undefined : { body: await requestBlob(request) }
      // With `giveUp: 'response'` a give-up after a response arrives here as that response.
      return markPaced(await client.fetch(request, init))
    } catch (error) {
      const giveUp = toGiveUp(error)
      // Aborts and network errors stay errors: the page's fetch rejects as it would without us.
      if (!giveUp) throw error
      return giveUpResponse(giveUp, request, now(), new URL(request.url).origin !== scope.location.origin)
    }
  }

  const onFetch = (event: FetchEventLike) => {
    if (!handles(event.request)) return
    event.respondWith(answer(event.request))
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
