// The few service-worker globals the installer touches, typed structurally so the
// installer compiles under both the WebWorker lib (sw/tsconfig.json) and the DOM lib
// the unit tests use, and so tests can hand in a fake scope instead of `self`.
import type { LockManagerLike } from '../src/tabs/leader-election.js'
import type { ClientsLike, MessageEventLike } from './message-hub.js'

/** The part of a `FetchEvent` the installer uses. */
export interface FetchEventLike {
  readonly request: Request
  respondWith(response: Response | Promise<Response>): void
  waitUntil(promise: Promise<unknown>): void
}

export interface ExtendableEventLike {
  waitUntil(promise: Promise<unknown>): void
}

export interface WorkerGlobalLike {
  readonly location: { readonly origin: string }
  readonly clients: ClientsLike & { claim(): Promise<void> }
  /** Web Locks, where the browser has them: to hear of a page that crashed (tab-bridge.ts). */
  readonly navigator?: { readonly locks?: LockManagerLike }
  skipWaiting(): Promise<void>
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>
  /** Listeners are typed by the installer; `never` lets any of them through. */
  addEventListener(type: string, listener: (event: never) => void): void
  removeEventListener(type: string, listener: (event: never) => void): void
}
