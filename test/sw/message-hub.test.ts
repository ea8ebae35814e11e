import { describe, expect, it } from 'vitest'
import { RESTORE_TIMEOUT_MS } from '../../src/client/lane-persistence.js'
import type { Store } from '../../src/core/types.js'
import { flushPromises, ManualClock } from '../helpers/manual-clock.js'
import { track } from '../helpers/scripted-job.js'
import { SUBSCRIBERS_KEY, createMessageHub, type MessageTarget } from '../../sw/message-hub.js'
import { PAGE_MESSAGE, WORKER_MESSAGE, type WorkerMessage } from '../../src/protocol/worker-messages.js'

function memoryStore(): Store & { data: Map<string, unknown> } {
  const data = new Map<string, unknown>()
  return { data, get: async (k) => structuredClone(data.get(k)), set: async (k, v) => void data.set(k, structuredClone(v)) }
}

function fakeLimiter() {
  const listeners = new Map<string, ((detail: unknown) => void)[]>()
  return {
    onCalls: 0,
    stats: () => ({ scopes: { 'https://api.example': { ratePerSecond: 2.5, throttled: 3 } }, fn: () => 0 }),
    on(event: string, listener: (detail: unknown) => void) {
      this.onCalls++
      listeners.set(event, [...(listeners.get(event) ?? []), listener])
    },
    emit(event: string, detail: unknown) {
      for (const l of listeners.get(event) ?? []) l(detail)
    },
  }
}

function page(id: string) {
  const received: WorkerMessage[] = []
  const target: MessageTarget & { id: string } = { id, postMessage: (m) => void received.push(m) }
  return { target, received }
}

const info = { instanceId: 'one', startedAt: 1000 }
const settle = () => new Promise((resolve) => setTimeout(resolve, 0))

function setup(store = memoryStore(), pages = [page('a'), page('b')]) {
  const limiter = fakeLimiter()
  const clients = { get: async (id: string) => pages.find((p) => p.target.id === id)?.target }
  const hub = createMessageHub({ client: limiter, clients, info, now: () => 2000, store })
  return { hub, limiter, pages, store }
}

describe('createMessageHub', () => {
  it('answers stats on the reply port with the worker instance and the request id', async () => {
    const { hub, pages } = setup()
    const port = page('port')
    await hub.onMessage({ data: { type: PAGE_MESSAGE.stats, id: 7 }, ports: [port.target], source: pages[0]!.target })
    expect(port.received).toEqual([
      { type: WORKER_MESSAGE.statsReply, id: 7, worker: info, stats: { scopes: { 'https://api.example': { ratePerSecond: 2.5, throttled: 3 } } } },
    ])
    expect(pages[0]!.received).toEqual([])
  })

  it('answers the sender when no port came with the request', async () => {
    const { hub, pages } = setup()
    await hub.onMessage({ data: { type: PAGE_MESSAGE.stats }, source: pages[0]!.target })
    expect(pages[0]!.received.map((m) => m.type)).toEqual([WORKER_MESSAGE.statsReply])
  })

  it('ignores messages that are not ours', async () => {
    const { hub, pages } = setup()
    await hub.onMessage({ data: { type: 'SKIP_WAITING' }, source: pages[0]!.target })
    expect(pages[0]!.received).toEqual([])
  })

  it('forwards an event only to the pages subscribed to it, until they unsubscribe', async () => {
    const { hub, limiter, pages } = setup()
    const [a, b] = pages as [ReturnType<typeof page>, ReturnType<typeof page>]
    await hub.onMessage({ data: { type: PAGE_MESSAGE.subscribe, events: ['retry'] }, source: a.target })
    await hub.onMessage({ data: { type: PAGE_MESSAGE.subscribe, events: ['retry', 'give-up'] }, source: b.target })
    expect(limiter.onCalls).toBe(2)
    limiter.emit('retry', { scope: 's', waitMs: 250 })
    limiter.emit('give-up', { reason: 'deadline' })
    await settle()
    expect(a.received).toEqual([{ type: WORKER_MESSAGE.event, event: 'retry', detail: { scope: 's', waitMs: 250 }, at: 2000 }])
    expect(b.received.map((m) => (m.type === WORKER_MESSAGE.event ? m.event : ''))).toEqual(['retry', 'give-up'])

    await hub.onMessage({ data: { type: PAGE_MESSAGE.unsubscribe, events: ['retry'] }, source: b.target })
    await hub.onMessage({ data: { type: PAGE_MESSAGE.unsubscribe }, source: a.target })
    limiter.emit('retry', {})
    await settle()
    expect(a.received).toHaveLength(1)
    expect(b.received).toHaveLength(2)
  })

  it('keeps subscriptions across a worker restart through the store', async () => {
    const store = memoryStore()
    const first = setup(store)
    await first.hub.onMessage({ data: { type: PAGE_MESSAGE.subscribe, events: ['retry'] }, source: first.pages[0]!.target })

    const second = setup(store)
    await second.hub.restored
    second.limiter.emit('retry', { n: 1 })
    await settle()
    expect(second.pages[0]!.received).toHaveLength(1)
  })

  it('forgets, when it starts, the subscribers that have gone (each page load is a new client id)', async () => {
    // Pages subscribe at every load and never say goodbye; a subscriber was forgotten only when an
    // event it asked for found it gone, so ids waiting for a rare event piled up in the store.
    const store = memoryStore()
    store.data.set(SUBSCRIBERS_KEY, { a: ['give-up'], gone1: ['give-up'], gone2: ['split'] })
    const { hub } = setup(store, [page('a')])
    await hub.restored
    await settle()
    expect(store.data.get(SUBSCRIBERS_KEY)).toEqual({ a: ['give-up'] })
    await hub.onMessage({ data: { type: PAGE_MESSAGE.unsubscribe, events: ['give-up'] }, source: page('a').target })
    expect(store.data.get(SUBSCRIBERS_KEY)).toEqual({})
  })

  it('forgets a page that has gone away', async () => {
    const store = memoryStore()
    const { hub, limiter, pages } = setup(store, [page('a')])
    await hub.onMessage({ data: { type: PAGE_MESSAGE.subscribe, events: ['retry'] }, source: pages[0]!.target })
    pages.length = 0
    limiter.emit('retry', {})
    await settle()
    await settle()
    expect(store.data.get(SUBSCRIBERS_KEY)).toEqual({})
  })
})

describe('createMessageHub with a store that never answers (a hung IndexedDB)', () => {
  it('still answers stats, and takes subscriptions once the store has had its second', async () => {
    const clock = new ManualClock()
    const hung: Store = { get: () => new Promise(() => {}), set: () => new Promise(() => {}) }
    const limiter = fakeLimiter()
    const a = page('a')
    const hub = createMessageHub({ client: limiter, clients: { get: async () => a.target }, info, now: () => 0, store: hung, clock })
    const stats = track(hub.onMessage({ data: { type: PAGE_MESSAGE.stats }, source: a.target }))
    await flushPromises()
    expect(stats.settled).toBe(true)
    expect(a.received.map((m) => m.type)).toEqual([WORKER_MESSAGE.statsReply])

    // The message event's waitUntil settles, so the browser is not kept waiting on the store.
    const subscribed = track(hub.onMessage({ data: { type: PAGE_MESSAGE.subscribe, events: ['retry'] }, source: a.target }))
    await clock.advance(2 * RESTORE_TIMEOUT_MS)
    expect(subscribed.settled).toBe(true)
    limiter.emit('retry', {})
    await flushPromises()
    expect(a.received.map((m) => m.type)).toEqual([WORKER_MESSAGE.statsReply, WORKER_MESSAGE.event])
  })
})

describe('createMessageHub with an unknown event name', () => {
  it('reports it instead of throwing out of the message handler', async () => {
    const errors: unknown[] = []
    const limiter = {
      stats: () => ({}),
      on(event: string) {
        if (event !== 'retry') throw new TypeError(`unknown event ${event}`)
      },
    }
    const a = page('a')
    const hub = createMessageHub({ client: limiter, clients: { get: async () => a.target }, info, now: () => 0, onError: (e) => errors.push(e) })
    await expect(hub.onMessage({ data: { type: PAGE_MESSAGE.subscribe, events: ['nope'] }, source: a.target })).resolves.toBeUndefined()
    expect(errors).toHaveLength(1)
  })
})
