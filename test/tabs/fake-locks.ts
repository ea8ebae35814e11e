// An in-process stand-in for `navigator.locks` (Web Locks exist only in browsers; the real
// ones are exercised by test/e2e/browser-tabs.test.ts): exclusive locks by name, granted in
// request order, released when the callback's promise settles; `ifAvailable` and `signal`.
import type { LockManagerLike } from '../../src/tabs/leader-election.js'

type Callback = (lock: unknown) => Promise<void> | void

interface Waiter {
  callback: Callback
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export function fakeLocks(): LockManagerLike & { held(name: string): boolean } {
  const held = new Set<string>()
  const queues = new Map<string, Waiter[]>()

  const grant = (name: string, waiter: Waiter) => {
    held.add(name)
    Promise.resolve()
      .then(() => waiter.callback({ name }))
      .then(waiter.resolve, waiter.reject)
      .finally(() => {
        held.delete(name)
        const next = queues.get(name)?.shift()
        if (next) grant(name, next)
      })
  }

  return {
    held: (name) => held.has(name),
    request(name, options, callback) {
      return new Promise((resolve, reject) => {
        const waiter: Waiter = { callback, resolve, reject }
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
    },
  }
}
