// The wire between the tabs of one sharing group: a BroadcastChannel (same origin only,
// structured clone), behind a two-method seam so the tests can drive several "tabs" in one
// process and the election and the call protocol never touch the browser API directly.
import { readTabMessage, tabChannelName, type TabMessage } from '../protocol/tab-messages.js'

export interface TabChannel {
  /** Deliver to every other tab of the group (a sender never hears itself). */
  post(message: TabMessage): void
  /** Valid messages only: malformed and foreign data never reaches `handler`. */
  listen(handler: (message: TabMessage) => void): () => void
  close(): void
}

/** The group's BroadcastChannel, or undefined where the browser has none (sharing is then off). */
export function broadcastTabChannel(group: string, onError: (error: unknown) => void = () => {}): TabChannel | undefined {
  if (typeof BroadcastChannel !== 'function') return undefined
  const channel = new BroadcastChannel(tabChannelName(group))
  const handlers = new Set<(message: TabMessage) => void>()
  channel.onmessage = (event: MessageEvent) => {
    const message = readTabMessage(event.data)
    if (!message) return
    for (const handler of handlers) {
      try {
        handler(message)
      } catch (error) {
        onError(error)
      }
    }
  }
  return {
    post(message) {
      try {
        channel.postMessage(message)
      } catch (error) {
        // A closed channel or a value that cannot be cloned: the call paths time out or resubmit.
        onError(error)
      }
    },
    listen(handler) {
      handlers.add(handler)
      return () => handlers.delete(handler)
    },
    close() {
      handlers.clear()
      channel.onmessage = null
      channel.close()
    },
  }
}
