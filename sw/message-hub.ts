// The worker's side of the page protocol: answers `stats` requests and forwards the
// limiter's events to the pages that subscribed. Subscriptions are persisted, because
// the browser stops idle workers at will and a page has no way to notice.
import { RESTORE_TIMEOUT_MS } from '../src/client/lane-persistence.js'
import { systemClock } from '../src/client/system-clock.js'
import { type AnyClock, cancelTimer, startTimer } from '../src/client/timer.js'
import type { Store } from '../src/core/types.js'
import {
  PAGE_MESSAGE,
  WORKER_FEATURE,
  WORKER_MESSAGE,
  readPageMessage,
  toCloneable,
  type WorkerInfo,
  type WorkerMessage,
} from '../src/protocol/worker-messages.js'

export interface MessageTarget {
  postMessage(message: WorkerMessage): void
}

/** The part of `self.clients` the hub uses. */
export interface ClientsLike {
  get(id: string): Promise<MessageTarget | null | undefined>
}

/** The part of an `ExtendableMessageEvent` the hub uses. */
export interface MessageEventLike {
  data: unknown
  ports?: readonly MessageTarget[]
  source?: (MessageTarget & { id?: string }) | null
}

/** What the hub needs from the limiter client: its stats and its event emitter. */
export interface StatsAndEvents {
  stats(): unknown
  on(event: string, listener: (detail: unknown) => void): unknown
}

export interface MessageHubOptions {
  client: StatsAndEvents
  clients: ClientsLike
  info: WorkerInfo
  now: () => number
  store?: Store
  onError?: (error: unknown) => void
  /** Times the store's answers (default the system clock; tests pass a manual one). */
  clock?: AnyClock
  /** A page aborted the call it named in CALL_HEADER (page-calls.ts); without it, `abort` is ignored and not announced. */
  abortCall?: (call: string) => void
  /** The worker applies the per-call options a page sends in CALL_OPTIONS_HEADER: announced, or the page never sends them. */
  callOptions?: boolean
}

export interface MessageHub {
  /** Handle one `message` event; resolves when any reply or persistence is done. */
  onMessage(event: MessageEventLike): Promise<void>
  /** Settles once the subscriptions a previous worker instance persisted are re-attached. */
  readonly restored: Promise<void>
}

export const SUBSCRIBERS_KEY = 'polite-fetch:subscribers'

export function createMessageHub(options: MessageHubOptions): MessageHub {
  const { client, clients, info, now, store } = options
  const report = options.onError ?? (() => {})
  const clock = options.clock ?? systemClock
  /**
   * `work`, waited for at most RESTORE_TIMEOUT_MS, as the limiter waits for its lanes' state: a
   * store that never answers (a hung IndexedDB) must not hold the message events' waitUntil.
   */
  const bounded = async (work: Promise<unknown>): Promise<void> => {
    let timer: unknown
    const timeout = new Promise<void>((resolve) => {
      timer = startTimer(clock, RESTORE_TIMEOUT_MS, resolve, undefined, true)
    })
    try {
      await Promise.race([work, timeout])
    } finally {
      cancelTimer(clock, timer)
    }
  }
  /** client id → event names it wants. */
  const subscribers = new Map<string, Set<string>>()
  const listening = new Set<string>()

  const persist = async (): Promise<void> => {
    if (!store) return
    const plain: Record<string, string[]> = {}
    for (const [id, events] of subscribers) plain[id] = [...events]
    await bounded(store.set(SUBSCRIBERS_KEY, plain))
  }

  const deliver = async (id: string, message: WorkerMessage): Promise<void> => {
    try {
      const target = await clients.get(id)
      if (target) return target.postMessage(message)
    } catch (error) {
      report(error)
    }
    // The page is gone (closed tab, navigated away): forget it.
    if (subscribers.delete(id)) await persist()
  }

  const listen = (event: string): void => {
    if (listening.has(event)) return
    try {
      client.on(event, (detail) => {
        const message: WorkerMessage = { type: WORKER_MESSAGE.event, event, detail: toCloneable(detail), at: now() }
        for (const [id, events] of subscribers) if (events.has(event)) void deliver(id, message)
      })
      listening.add(event)
    } catch (error) {
      // An event name the limiter does not know (a newer page, a typo): nothing to forward.
      report(error)
    }
  }

  const subscribe = (id: string, events: readonly string[]): void => {
    const set = subscribers.get(id) ?? new Set<string>()
    for (const event of events) {
      set.add(event)
      listen(event)
    }
    subscribers.set(id, set)
  }

  /** Whether the page `id` is still open (an error counts as yes: it is asked again at its next event). */
  const isOpen = async (id: string): Promise<boolean> => {
    try {
      return Boolean(await clients.get(id))
    } catch (error) {
      report(error)
      return true
    }
  }

  const restore = async (): Promise<void> => {
    if (!store) return
    try {
      let saved: unknown
      await bounded(store.get(SUBSCRIBERS_KEY).then((value) => (saved = value)))
      if (typeof saved !== 'object' || saved === null) return
      const entries = Object.entries(saved as Record<string, unknown>)
      // Every page load is a new client id and pages never say goodbye: the ids of closed pages
      // are dropped here, or those waiting for a rare event would pile up in the store.
      const open = await Promise.all(entries.map(([id]) => isOpen(id)))
      entries.forEach(([id, events], i) => {
        if (open[i] && Array.isArray(events)) subscribe(id, events.filter((e): e is string => typeof e === 'string'))
      })
      if (subscribers.size < entries.length) await persist()
    } catch (error) {
      report(error)
    }
  }
  // Started at once: a subscribe that arrived first would otherwise persist over the saved list.
  const restored = restore()

  return {
    restored,
    async onMessage(event) {
      const message = readPageMessage(event.data)
      if (!message) return
      try {
        if (message.type === PAGE_MESSAGE.abort) {
          options.abortCall?.(message.call)
          return
        }
        // Stats do not wait for the saved subscriptions: they do not depend on them.
        if (message.type === PAGE_MESSAGE.stats) {
          const reply: WorkerMessage = { type: WORKER_MESSAGE.statsReply, stats: toCloneable(client.stats()), worker: info }
          if (message.id !== undefined) reply.id = message.id
          // What the page may rely on: it sends these headers only to a worker that reads (and removes) them.
          const features: string[] = []
          if (options.abortCall !== undefined) features.push(WORKER_FEATURE.abort)
          if (options.callOptions === true) features.push(WORKER_FEATURE.callOptions)
          if (features.length > 0) reply.features = features
          const port = event.ports?.[0] ?? event.source
          port?.postMessage(reply)
          return
        }
        const id = event.source?.id
        if (!id) return
        await restored
        if (message.type === PAGE_MESSAGE.subscribe) subscribe(id, message.events)
        else if (!message.events) subscribers.delete(id)
        else {
          const events = subscribers.get(id)
          for (const name of message.events) events?.delete(name)
          if (events?.size === 0) subscribers.delete(id)
        }
        await persist()
      } catch (error) {
        report(error)
      }
    },
  }
}
