// Page side: register the polite-fetch service worker (workbox-window) and talk to it;
// where no worker can run (no service workers, an insecure origin, registration
// refused, the worker never takes control) fall back to an in-page client with the
// same API, so callers never branch on where the limiter lives.
import { Workbox, messageSW } from 'workbox-window'
import { createClient, type Client, type PoliteRequestInit } from '../client/create-client.js'
import type { LimiterEventName } from '../client/limiter-events.js'
import type { FetchInput } from '../client/fetch-types.js'
import type { ClientOptions } from '../client/options.js'
import {
  CALL_HEADER,
  PAGE_MESSAGE,
  readStatsReply,
  readWorkerEvent,
  WORKER_FEATURE,
  type WorkerInfo,
} from '../protocol/worker-messages.js'
import { CALL_OPTIONS_HEADER, writeCallOptions } from '../protocol/call-options.js'
import { idbStore } from '../storage/idb-store.js'
import { SERVICE_WORKER_TAB_ID } from '../protocol/tab-messages.js'
import { createTabLimiter, type TabLaneInfo, type TabLimiter } from '../tabs/create-tab-limiter.js'
import { workerTabChannel } from './worker-tab-channel.js'

export type PoliteFetchMode = 'worker' | 'in-page'

export interface RegisterOptions {
  /** `classic` (default: every browser with service workers) or `module` worker script. */
  workerType?: 'classic' | 'module'
  /** Registration scope (default: the script's folder). */
  workerScope?: string
  /** Options of the in-page client used when the worker is unavailable. */
  inPage?: ClientOptions
  /** Use the in-page client even where a worker could run (comparisons, opt-out). */
  forceInPage?: boolean
  /**
   * In-page mode (the fallback, or `forceInPage`): share one lane per scope with the other
   * tabs of this origin (a leader tab per scope paces every tab's calls; its pacer state is
   * kept in IndexedDB, `inPage.store` by default `idbStore('polite-fetch')`, the worker's).
   * `false` gives each tab a lane of its own. No effect in worker mode. @default true
   */
  shareTabs?: boolean
  /** How long to wait for the worker to control this page before falling back in-page (default 10 000 ms). */
  controlTimeoutMs?: number
  /** How long a `stats()` round trip to the worker may take (default 3 000 ms). */
  messageTimeoutMs?: number
  /** Told about registration and messaging failures that were absorbed by a fallback. */
  onError?: (error: unknown) => void
}

export interface PoliteFetchStats {
  mode: PoliteFetchMode
  /** The limiter's `stats()` (from the worker, or the in-page client). */
  stats: unknown
  /** Worker mode: which worker instance answered. */
  worker?: WorkerInfo
  /** In-page mode: whether the lane is shared with the other tabs, and which tab leads each scope. */
  tabs?: TabLaneInfo
}

export interface PoliteFetchRegistration {
  /** Where the limiter runs; settles to its final value when `ready` resolves. */
  readonly mode: PoliteFetchMode
  /** Resolves once requests from this page go through the limiter; never rejects. */
  readonly ready: Promise<PoliteFetchMode>
  /**
   * A drop-in `fetch`: waits for `ready`, then goes through the worker or the in-page client.
   * `init.politeFetch` holds in both modes (the worker gets it in a header; see service-worker.md).
   */
  fetch(input: FetchInput, init?: PoliteRequestInit): Promise<Response>
  /** The limiter's live stats. Rejects only if the worker does not answer in time. */
  stats(): Promise<PoliteFetchStats>
  /** Listen to a limiter event (`fn(detail)`); returns the unsubscribe function. */
  on(event: string, listener: (detail: unknown) => void): () => void
  /** Stop listening and close the in-page client (the worker itself stays registered). */
  close(): void
}

const DEFAULT_CONTROL_TIMEOUT_MS = 10_000
const DEFAULT_MESSAGE_TIMEOUT_MS = 3_000

/** A name for one call, unique enough among the calls one worker serves at once. */
function callId(): string {
  const crypto = globalThis.crypto
  return typeof crypto?.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`polite-fetch: ${what} timed out after ${ms} ms`)), ms)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/** Resolves when a worker running `scriptUrl` controls the page; false after `timeoutMs`. */
function whenControlled(container: ServiceWorkerContainer, scriptUrl: string, timeoutMs: number): Promise<boolean> {
  const ours = () => container.controller?.scriptURL === scriptUrl
  if (ours()) return Promise.resolve(true)
  return new Promise<boolean>((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer)
      container.removeEventListener('controllerchange', onChange)
      resolve(value)
    }
    const onChange = () => {
      if (ours()) done(true)
    }
    const timer = setTimeout(() => done(ours()), timeoutMs)
    container.addEventListener('controllerchange', onChange)
  })
}

export function registerPoliteFetch(scriptUrl: string, options: RegisterOptions = {}): PoliteFetchRegistration {
  const report = options.onError ?? (() => {})
  // workbox-window registers through navigator.serviceWorker itself, so that is the one container.
  const container: ServiceWorkerContainer | undefined =
    typeof navigator !== 'undefined' && navigator.serviceWorker ? navigator.serviceWorker : undefined
  const listeners = new Map<string, Set<(detail: unknown) => void>>()
  const detachInPage = new Map<string, () => void>()
  let inPageClient: Client | undefined
  let tabLimiter: TabLimiter | undefined
  /** Our worker, active but not controlling this page (a hard reload): it leads this page's lanes. */
  let bypassedWorker: ServiceWorker | undefined
  let mode: PoliteFetchMode = options.forceInPage || !container ? 'in-page' : 'worker'

  const inPage = () => (inPageClient ??= createInPageClient())
  const createInPageClient = (): Client => {
    const clientOptions = options.inPage ?? {}
    if (options.shareTabs === false) return createClient(clientOptions)
    // The store the worker uses: a new leader (or a reloaded tab) resumes the learned pace.
    const store = clientOptions.store ?? idbStore('polite-fetch', { onError: report })
    tabLimiter =
      bypassedWorker && container
        ? createTabLimiter({
            ...clientOptions,
            store,
            onError: report,
            channel: workerTabChannel(container, bypassedWorker, report),
            leader: SERVICE_WORKER_TAB_ID,
          })
        : createTabLimiter({ ...clientOptions, store, onError: report })
    return createClient({ ...clientOptions, limiter: tabLimiter })
  }
  const tabInfo = (): TabLaneInfo => tabLimiter?.info() ?? { shared: false, tabId: '', leaders: {} }
  const emit = (event: string, detail: unknown) => {
    for (const listener of listeners.get(event) ?? []) {
      try {
        listener(detail)
      } catch (error) {
        report(error)
      }
    }
  }
  const attachInPage = (event: string) => {
    if (detachInPage.has(event)) return
    try {
      detachInPage.set(event, inPage().on(event as LimiterEventName, (detail: unknown) => emit(event, detail)))
    } catch (error) {
      // An event name this version of the limiter does not emit: nothing will come.
      report(error)
    }
  }
  const onWorkerMessage = (message: MessageEvent) => {
    const event = readWorkerEvent(message.data)
    if (event) emit(event.event, event.detail)
  }
  const toWorker = (message: object) => {
    try {
      container?.controller?.postMessage(message)
    } catch (error) {
      report(error)
    }
  }

  /** What each worker that controlled this page said it supports (its stats reply's `features`). */
  const features = new WeakMap<ServiceWorker, ReadonlySet<string>>()
  /** The stats round trip that tells them, asked once per worker; settles (never rejects) within messageTimeoutMs. */
  const learning = new WeakMap<ServiceWorker, Promise<void>>()
  const messageTimeoutMs = options.messageTimeoutMs ?? DEFAULT_MESSAGE_TIMEOUT_MS
  const learnFeatures = (worker: ServiceWorker): Promise<void> => {
    let learnt = learning.get(worker)
    if (learnt === undefined) {
      learnt = withTimeout(messageSW(worker, { type: PAGE_MESSAGE.stats }), messageTimeoutMs, 'stats').then((data) => {
        const reply = readStatsReply(data)
        if (reply) features.set(worker, new Set(reply.features))
      }, report)
      learning.set(worker, learnt)
    }
    return learnt
  }
  /** Workers already told about (onError) for ignoring per-call options: once each, not per call. */
  const warned = new WeakSet<ServiceWorker>()

  /**
   * The page's own fetch, which the worker intercepts. Two things the worker cannot see in a plain
   * request travel in headers, each only to a worker that said it reads and removes it (an older
   * one would send it on to the server):
   * - a call with a signal is named in CALL_HEADER and its abort posted to the worker: Chromium never
   *   aborts the worker's copy of the request, which stayed queued there and went out later;
   * - `init.politeFetch` goes in CALL_OPTIONS_HEADER: dropped, a call got the worker's deadline,
   *   budget, lane and cost instead of its own, where in-page it got its own.
   * A call that needs either waits for the worker's answer about its features (asked when it took
   * control), else the first calls of a page went without them.
   */
  const workerFetch = async (input: FetchInput, init: PoliteRequestInit | undefined): Promise<Response> => {
    const request = typeof input === 'object' && 'signal' in input ? input : undefined
    const signal = init?.signal ?? request?.signal
    const worker = container?.controller
    const polite: unknown = init?.politeFetch
    const callOptions = writeCallOptions(polite)
    const bodyFactory = (polite as { body?: unknown } | null | undefined)?.body
    let sent: PoliteRequestInit | undefined = init
    if (typeof bodyFactory === 'function') {
      // A function cannot reach the worker. Called here once, as the client calls it for each attempt
      // (and a throw rejects the call alike): the worker replays the body it makes (request-blob.ts).
      const body = (bodyFactory as () => RequestInit['body'])()
      sent = { ...init, body }
      if (typeof ReadableStream === 'function' && body instanceof ReadableStream) (sent as { duplex?: string }).duplex = 'half'
    }
    const live = signal !== undefined && signal !== null && !signal.aborted
    if (!worker || (!live && callOptions === undefined)) return fetch(input, sent)
    const known = features.get(worker) ?? (await learnFeatures(worker), features.get(worker))
    const headers = new Headers(init?.headers ?? request?.headers)
    let marked = false
    if (callOptions !== undefined) {
      if (known?.has(WORKER_FEATURE.callOptions) === true) {
        headers.set(CALL_OPTIONS_HEADER, callOptions)
        marked = true
      } else if (!warned.has(worker)) {
        warned.add(worker)
        const names = [...new URLSearchParams(callOptions).keys()].join(', ')
        report(new Error(`polite-fetch: the service worker does not say it reads per-call options (an older version, or no answer): politeFetch ${names} not applied`))
      }
    }
    const call = live && known?.has(WORKER_FEATURE.abort) === true ? callId() : undefined
    if (call !== undefined) {
      headers.set(CALL_HEADER, call)
      marked = true
    }
    if (!marked) return fetch(input, sent)
    const marking: PoliteRequestInit = { ...sent, headers }
    // Of no use to the browser's fetch, and a function in it (body) has done its part above.
    delete marking.politeFetch
    if (call === undefined || !signal) return fetch(input, marking)
    const onAbort = () => {
      try {
        worker.postMessage({ type: PAGE_MESSAGE.abort, call })
      } catch (error) {
        report(error)
      }
    }
    signal.addEventListener('abort', onAbort, { once: true })
    return fetch(input, marking).finally(() => signal.removeEventListener('abort', onAbort))
  }

  /**
   * Back from the back/forward cache: the worker does not see a cached page (`clients.get`), so an
   * event it sent meanwhile (another tab's), or its restart, made it forget this page's subscription.
   */
  const onPageShow = (event: Event) => {
    if ((event as PageTransitionEvent).persisted && mode === 'worker' && listeners.size > 0) {
      toWorker({ type: PAGE_MESSAGE.subscribe, events: [...listeners.keys()] })
    }
  }
  const pageEvents = typeof addEventListener === 'function' && typeof removeEventListener === 'function'
  if (pageEvents && mode === 'worker') addEventListener('pageshow', onPageShow)

  const fallBack = (why: unknown): PoliteFetchMode => {
    report(why)
    mode = 'in-page'
    for (const event of listeners.keys()) attachInPage(event)
    return mode
  }

  const start = async (): Promise<PoliteFetchMode> => {
    if (mode === 'in-page' || !container) return 'in-page'
    let registration: ServiceWorkerRegistration | undefined
    const absolute = new URL(scriptUrl, typeof location === 'undefined' ? undefined : location.href).href
    try {
      const registerOptions: RegistrationOptions & { type?: 'classic' | 'module' } = {}
      if (options.workerScope !== undefined) registerOptions.scope = options.workerScope
      if (options.workerType !== undefined) registerOptions.type = options.workerType
      const workbox = new Workbox(absolute, registerOptions)
      registration = await workbox.register({ immediate: true })
    } catch (error) {
      return fallBack(error)
    }
    container.addEventListener('message', onWorkerMessage)
    container.startMessages?.()
    // Our worker is activated (its clients.claim() has run) and still does not control this
    // page: a hard reload, which the worker will not see until the next navigation. Fall back
    // at once, and let the worker's lanes pace this page's calls (they are sent from here).
    const active = registration?.active
    if (active?.scriptURL === absolute && active.state === 'activated' && !registration?.installing && !registration?.waiting) {
      await new Promise((resolve) => setTimeout(resolve, 0)) // a controllerchange already queued runs first
      if (container.controller?.scriptURL !== absolute) {
        if (options.shareTabs !== false) bypassedWorker = active
        return fallBack(new Error('polite-fetch: the service worker does not control this page (a hard reload)'))
      }
    }
    const controlled = await whenControlled(container, absolute, options.controlTimeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS)
    if (!controlled) return fallBack(new Error('polite-fetch: the service worker did not take control of this page'))
    if (listeners.size > 0) toWorker({ type: PAGE_MESSAGE.subscribe, events: [...listeners.keys()] })
    if (container.controller) void learnFeatures(container.controller)
    return mode
  }
  const ready = start().catch(fallBack)

  return {
    get mode() {
      return mode
    },
    ready,
    async fetch(input, init) {
      const settled = await ready
      if (settled === 'worker') return workerFetch(input, init)
      return inPage().fetch(input, init)
    },
    async stats() {
      const settled = await ready
      if (settled === 'in-page') {
        const client = inPage()
        const timeoutMs = options.messageTimeoutMs ?? DEFAULT_MESSAGE_TIMEOUT_MS
        const stats = tabLimiter ? await tabLimiter.sharedStats(timeoutMs) : client.stats()
        return { mode: settled, stats, tabs: tabInfo() }
      }
      const controller = container?.controller
      if (!controller) return { mode: 'worker', stats: undefined }
      const timeoutMs = options.messageTimeoutMs ?? DEFAULT_MESSAGE_TIMEOUT_MS
      const reply = readStatsReply(await withTimeout(messageSW(controller, { type: PAGE_MESSAGE.stats }), timeoutMs, 'stats'))
      if (!reply) throw new Error('polite-fetch: the service worker answered stats with something else')
      features.set(controller, new Set(reply.features))
      return { mode: 'worker', stats: reply.stats, worker: reply.worker }
    },
    on(event, listener) {
      const set = listeners.get(event) ?? new Set()
      const first = set.size === 0
      set.add(listener)
      listeners.set(event, set)
      if (first) {
        if (mode === 'in-page') attachInPage(event)
        // Before `ready` the subscription goes out with the others once the worker controls the page.
        else if (container?.controller) toWorker({ type: PAGE_MESSAGE.subscribe, events: [event] })
      }
      return () => {
        set.delete(listener)
        if (set.size > 0) return
        listeners.delete(event)
        detachInPage.get(event)?.()
        detachInPage.delete(event)
        if (mode === 'worker') toWorker({ type: PAGE_MESSAGE.unsubscribe, events: [event] })
      }
    },
    close() {
      container?.removeEventListener('message', onWorkerMessage)
      if (pageEvents) removeEventListener('pageshow', onPageShow)
      // Else the worker keeps posting this page every event it asked for, for as long as the page lives.
      if (mode === 'worker' && listeners.size > 0) toWorker({ type: PAGE_MESSAGE.unsubscribe })
      for (const off of detachInPage.values()) off()
      detachInPage.clear()
      listeners.clear()
      void inPageClient?.close()
      void tabLimiter?.close()
    },
  }
}
