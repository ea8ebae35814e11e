// An in-process stand-in for `navigator.locks` (Web Locks exist only in browsers; the real
// ones are exercised by test/e2e/browser-tabs.test.ts): exclusive locks by name, granted in
// request order, released when the callback's promise settles; `ifAvailable` and `signal`.
// `tab()` gives one tab's view, whose `crash()` releases every lock it holds and drops its
// queued requests, as the browser does for a tab that dies without a word.
import type { LockManagerLike } from '../../src/tabs/leader-election.js'

type Callback = (lock: unknown) => Promise<void> | void

interface Waiter {
  callback: Callback
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  owner: Owner
}

interface Owner {
  crashed: boolean
  /** Held lock name → release it now. */
  held: Map<string, () => void>
}

export interface FakeLocks extends LockManagerLike {
  held(name: string): boolean
  /** One tab's locks. */
  tab(): LockManagerLike & { crash(): void }
}

export function fakeLocks(): FakeLocks {
  const held = new Set<string>()
  const queues = new Map<string, Waiter[]>()

  const next = (name: string) => {
    held.delete(name)
    const queue = queues.get(name)
    let waiter = queue?.shift()
    while (waiter?.owner.crashed) waiter = queue?.shift()
    if (waiter) grant(name, waiter)
  }

  const grant = (name: string, waiter: Waiter) => {
    held.add(name)
    let released = false
    const release = () => {
      if (released) return
      released = true
      waiter.owner.held.delete(name)
      next(name)
    }
    waiter.owner.held.set(name, release)
    Promise.resolve()
      .then(() => waiter.callback({ name }))
      .then(waiter.resolve, waiter.reject)
      .finally(release)
  }

  const requestAs = (owner: Owner): LockManagerLike['request'] => (name, options, callback) =>
    new Promise((resolve, reject) => {
      if (owner.crashed) return
      const waiter: Waiter = { callback, resolve, reject, owner }
      if (!held.has(name)) {
        grant(name, waiter)
        return
      }
      if (options.ifAvailable) {
        Promise.resolve()
          .then(() => callback(null))
          .then(resolve, reject)
        return
      }
      const queue = queues.get(name) ?? []
      queue.push(waiter)
      queues.set(name, queue)
      options.signal?.addEventListener('abort', () => {
        const at = queue.indexOf(waiter)
        if (at !== -1) queue.splice(at, 1)
        reject(new DOMException('aborted', 'AbortError'))
      })
    })

  const shared: Owner = { crashed: false, held: new Map() }
  return {
    held: (name) => held.has(name),
    request: requestAs(shared),
    tab() {
      const owner: Owner = { crashed: false, held: new Map() }
      return {
        request: requestAs(owner),
        crash() {
          owner.crashed = true
          for (const release of [...owner.held.values()]) release()
        },
      }
    },
  }
}
