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

/** What a transport provides: raw data in, messages out, and how to stop. */
export interface RawWire {
  /** Call `onData` with every datum received until the returned function is called. */
  receive(onData: (data: unknown) => void): () => void
  send(message: TabMessage): void
  close?(): void
}

/** A TabChannel over any wire: validates what comes in, absorbs what a handler or a send throws. */
export function tabChannelOver(wire: RawWire, onError: (error: unknown) => void): TabChannel {
  const handlers = new Set<(message: TabMessage) => void>()
  const stop = wire.receive((data) => {
    const message = readTabMessage(data)
    if (!message) return
    for (const handler of handlers) {
      try {
        handler(message)
      } catch (error) {
        onError(error)
      }
    }
  })
  return {
    post(message) {
      try {
        wire.send(message)
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
      stop()
      wire.close?.()
    },
  }
}

/** The group's BroadcastChannel, or undefined where the browser has none (sharing is then off). */
export function broadcastTabChannel(group: string, onError: (error: unknown) => void = () => {}): TabChannel | undefined {
  if (typeof BroadcastChannel !== 'function') return undefined
  const channel = new BroadcastChannel(tabChannelName(group))
  return tabChannelOver(
    {
      receive(onData) {
        channel.onmessage = (event: MessageEvent) => onData(event.data)
        return () => (channel.onmessage = null)
      },
      send: (message) => channel.postMessage(message),
      close: () => channel.close(),
    },
    onError,
  )
}
