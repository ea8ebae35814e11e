// A stand-in for a service worker's global scope: records listeners, lets a test
// dispatch fetch/message/install/activate events and await what the worker extended
// them with (the `dispatchAndWaitUntilDone` idea from workbox's tests).
import type { MessageTarget } from '../../sw/message-hub.js'
import type { WorkerGlobalLike } from '../../sw/worker-global.js'

export interface DispatchedFetch {
  /** The promise given to respondWith, or undefined when the worker let the request pass. */
  response: Promise<Response> | undefined
}

export function fakeWorkerGlobal(upstream: (request: Request) => Promise<Response> | Response, origin = 'https://app.example') {
  const listeners = new Map<string, ((event: never) => void)[]>()
  const pages = new Map<string, MessageTarget>()
  const calls = { skipWaiting: 0, claim: 0, upstream: [] as Request[] }
  const scope: WorkerGlobalLike = {
    location: { origin },
    clients: {
      get: async (id) => pages.get(id),
      claim: async () => void calls.claim++,
    },
    skipWaiting: async () => void calls.skipWaiting++,
    fetch: async (input, init) => {
      const request = new Request(input, init)
      calls.upstream.push(request)
      return upstream(request)
    },
    addEventListener: (type, listener) => void listeners.set(type, [...(listeners.get(type) ?? []), listener]),
    removeEventListener: (type, listener) => void listeners.set(type, (listeners.get(type) ?? []).filter((l) => l !== listener)),
  }
  const fire = (type: string, event: object) => {
    for (const listener of listeners.get(type) ?? []) (listener as (event: object) => void)(event)
  }
  return {
    scope,
    calls,
    pages,
    listenerCount: () => [...listeners.values()].reduce((n, list) => n + list.length, 0),
    fetch(request: Request): DispatchedFetch {
      const dispatched: DispatchedFetch = { response: undefined }
      fire('fetch', { request, respondWith: (r: Promise<Response>) => (dispatched.response = Promise.resolve(r)), waitUntil: () => {} })
      return dispatched
    },
    async extendable(type: string, event: object = {}): Promise<void> {
      const waits: Promise<unknown>[] = []
      fire(type, { ...event, waitUntil: (p: Promise<unknown>) => void waits.push(p) })
      await Promise.all(waits)
    },
  }
}
