// Whether another tab of the group still lives, on the browser's own word: each tab holds a
// Web Lock named after itself for as long as it lives, and a tab asking for that lock gets it
// only once the holder has closed or crashed. A crash says no bye on the channel, and a
// leader that kept a dead follower's calls would grant their attempts to nobody, each one a
// slot of its lane taken for ever.
//
// The lock is named after the tab alone, not its group: the service worker leads the lanes of
// pages it does not control (sw/tab-bridge.ts) without knowing which group a page chose, and
// watches them by the same name. Tab ids are random, so they are unique per origin.
import type { LockManagerLike } from './leader-election.js'

/** The Web Lock a tab holds while it lives. */
export function presenceLockName(tab: string): string {
  return `polite-fetch:tab-alive:${tab}`
}

export interface Presence {
  /** Call `gone` once `tab` has closed or crashed (idempotent per tab; never without Web Locks). */
  watch(tab: string, gone: () => void): void
  /** Stop watching `tab` (it said bye). */
  unwatch(tab: string): void
  /** Release this tab's own lock and stop watching. */
  close(): void
}

const NO_PRESENCE: Presence = { watch() {}, unwatch() {}, close() {} }

/**
 * `tabId`: this tab, which holds its own lock until `close`; undefined for a watcher that is no
 * tab (the service worker), which holds none.
 */
export function lockPresence(locks: LockManagerLike | undefined, tabId: string | undefined, onError: (error: unknown) => void): Presence {
  if (locks === undefined) return NO_PRESENCE
  const watches = new Map<string, AbortController>()
  let closed = false
  let release: () => void = () => {}
  // Requested before this tab posts anything: a leader's request for it, made once a message of
  // ours arrived, queues behind it on the browser's lock manager.
  if (tabId !== undefined) {
    locks.request(presenceLockName(tabId), {}, () => (closed ? undefined : new Promise<void>((resolve) => (release = resolve)))).catch(onError)
  }
  return {
    watch(tab, gone) {
      if (watches.has(tab)) return
      const abort = new AbortController()
      watches.set(tab, abort)
      locks
        .request(presenceLockName(tab), { signal: abort.signal }, () => {
          // Granted: the tab is gone. The lock is released as this callback returns.
          if (watches.get(tab) !== abort) return
          watches.delete(tab)
          gone()
        })
        .catch((error: unknown) => {
          if (!abort.signal.aborted) onError(error)
        })
    },
    unwatch(tab) {
      watches.get(tab)?.abort()
      watches.delete(tab)
    },
    close() {
      closed = true
      for (const abort of watches.values()) abort.abort()
      watches.clear()
      release()
    },
  }
}
