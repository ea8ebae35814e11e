// The worker as the lane leader of pages it does not control (a hard reload bypasses the
// worker until the next navigation): such a page posts tab-protocol calls to the worker
// instead of electing a tab, so its requests are granted by the same lanes as every
// controlled tab's. The page sends each attempt itself; the worker paces and decides.
import type { Limiter } from '../src/client/create-limiter.js'
import { readTabMessage, SERVICE_WORKER_TAB_ID, TAB_MESSAGE, type TabMessage } from '../src/protocol/tab-messages.js'
import type { LockManagerLike } from '../src/tabs/leader-election.js'
import type { TabChannel } from '../src/tabs/tab-channel.js'
import { createTabHost } from '../src/tabs/tab-host.js'
import { lockPresence, type Presence } from '../src/tabs/tab-presence.js'

interface PageTarget {
  postMessage(message: unknown): void
}

export interface TabBridge {
  /** A tab-protocol message: handled, resolving when no page call is left; undefined for any other message. */
  onMessage(event: { data: unknown; source?: unknown }): Promise<void> | undefined
  close(): void
}

/**
 * `locks`: the worker's `navigator.locks`. A page holds a presence lock while it lives, so the
 * worker hears of a page that crashed with calls in its lanes (without it, only a page's bye
 * tells, and a crashed page's calls would hold their lanes' slots until the worker stops).
 */
export function createTabBridge(limiter: Limiter, now: () => number, onError: (error: unknown) => void, locks?: LockManagerLike): TabBridge {
  /** Page tab id → its Client, to answer it (pages are known by the messages they send). */
  const pages = new Map<string, PageTarget>()
  let handler: ((message: TabMessage) => void) | undefined
  const channel: TabChannel = {
    post(message) {
      const targets = message.to !== undefined ? [pages.get(message.to)] : [...pages.values()]
      for (const target of targets) {
        try {
          target?.postMessage(message)
        } catch (error) {
          onError(error)
        }
      }
    },
    listen(listener) {
      handler = listener
      return () => (handler = undefined)
    },
    close() {
      pages.clear()
    },
  }
  const watcher = lockPresence(locks, undefined, onError)
  const presence: Presence = {
    watch: (tab, gone) =>
      watcher.watch(tab, () => {
        pages.delete(tab)
        gone()
      }),
    unwatch: (tab) => watcher.unwatch(tab),
    close: () => watcher.close(),
  }
  const host = createTabHost({ tabId: SERVICE_WORKER_TAB_ID, channel, limiter, leads: () => true, now, presence, onError })
  return {
    onMessage(event) {
      const message = readTabMessage(event.data)
      if (!message) return undefined
      const source = event.source as PageTarget | null | undefined
      if (typeof source?.postMessage === 'function') pages.set(message.from, source)
      host.onMessage(message)
      handler?.(message)
      if (message.type === TAB_MESSAGE.bye && message.scope === undefined) pages.delete(message.from)
      // Keeps the worker alive (waitUntil) while the page's calls are in its lanes.
      return host.idle()
    },
    close() {
      host.close()
      presence.close()
      channel.close()
    },
  }
}
