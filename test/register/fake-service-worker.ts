// A stand-in for navigator.serviceWorker whose "worker" is the real worker-side message
// hub (sw/message-hub.ts): a page ↔ worker round trip through both halves of the protocol.
import { createLimiter, type Limiter } from '../../src/client/create-limiter.js'
import { none } from '../../src/core/pacers/index.js'
import { createMessageHub, type MessageTarget } from '../../sw/message-hub.js'
import { createTabBridge } from '../../sw/tab-bridge.js'

export class FakeLimiter {
  readonly listeners = new Map<string, ((detail: unknown) => void)[]>()
  stats = () => [{ scope: 'https://api.example', ratePerSecond: 4, attempts: 9 }]
  on(event: string, listener: (detail: unknown) => void) {
    if (!['attempt', 'throttled', 'retry', 'rate', 'give-up', 'split'].includes(event)) throw new TypeError(`unknown event ${event}`)
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener])
  }
  emit(event: string, detail: unknown) {
    for (const listener of this.listeners.get(event) ?? []) listener(detail)
  }
}

export interface FakeServiceWorkerOptions {
  /** Reject `register()` with this error. */
  failRegister?: Error
  /** Never take control of the page. */
  neverControl?: boolean
  /** Do not answer messages. */
  silent?: boolean
  /** The registered worker's state (default `activated`). */
  state?: string
  /** A worker of before the page's abort message (it announces no features). */
  noAbort?: boolean
  /** A worker of before per-call options (it announces `abort` only, unless `noAbort`). */
  noCallOptions?: boolean
}

/** The worker's real lanes for pages it does not control (sw/tab-bridge.ts), over a real limiter. */
export const workerLimiter = (): Limiter => createLimiter({ strategy: none() })

export function fakeServiceWorker(options: FakeServiceWorkerOptions = {}) {
  const limiter = new FakeLimiter()
  const container = new EventTarget() as EventTarget & {
    controller: (MessageTarget & { scriptURL: string; state: string; addEventListener(): void }) | null
    register(url: string, init?: object): Promise<object>
    startMessages(): void
  }
  const registered: { url: string; init: object | undefined }[] = []
  // The page as the worker's `clients.get(id)` sees it: posting to it fires `message` on the container.
  const toPage: unknown[] = []
  const pageClient: MessageTarget & { id: string } = {
    id: 'page-1',
    postMessage: (data) => {
      toPage.push(data)
      container.dispatchEvent(new MessageEvent('message', { data }))
    },
  }
  /** The calls the page said it aborted (CALL_HEADER names). */
  const aborted: string[] = []
  const lanes = workerLimiter()
  const tabs = createTabBridge(lanes, () => Date.now(), () => {})
  const hub = createMessageHub({
    client: limiter,
    clients: { get: async (id) => (id === pageClient.id ? pageClient : undefined) },
    info: { instanceId: 'worker-1', startedAt: 1 },
    now: () => 42,
    ...(options.noAbort ? {} : { abortCall: (call: string) => void aborted.push(call) }),
    callOptions: !options.noAbort && !options.noCallOptions,
  })
  container.controller = null
  container.startMessages = () => {}
  container.register = async (url, init) => {
    registered.push({ url, init })
    if (options.failRegister) throw options.failRegister
    const worker = {
      scriptURL: url,
      state: options.state ?? 'activated',
      addEventListener() {},
      postMessage(data: unknown, transfer?: MessagePort[]) {
        if (options.silent) return
        if (tabs.onMessage({ data, source: pageClient }) === undefined) void hub.onMessage({ data, ports: transfer ?? [], source: pageClient })
      },
    }
    if (!options.neverControl) {
      setTimeout(() => {
        container.controller = worker
        container.dispatchEvent(new Event('controllerchange'))
      }, 0)
    }
    return { installing: null, waiting: null, active: worker, addEventListener() {}, update: async () => {} }
  }
  /** `toPage`: every message the worker posted to the page. */
  return { container, limiter, registered, hub, lanes, toPage, aborted }
}
