// The tab protocol's wire to the service worker, for a page the worker does not control
// (after a hard reload): posts go to the registration's active worker, answers come back
// as `message` events on navigator.serviceWorker. The worker leads every scope for it.
import { readTabMessage, type TabMessage } from '../protocol/tab-messages.js'
import type { TabChannel } from '../tabs/tab-channel.js'

export function workerTabChannel(
  container: ServiceWorkerContainer,
  worker: ServiceWorker,
  onError: (error: unknown) => void,
): TabChannel {
  const handlers = new Set<(message: TabMessage) => void>()
  const onMessage = (event: MessageEvent) => {
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
  container.addEventListener('message', onMessage)
  return {
    post(message) {
      try {
        worker.postMessage(message)
      } catch (error) {
        onError(error)
      }
    },
    listen(handler) {
      handlers.add(handler)
      return () => handlers.delete(handler)
    },
    close() {
      handlers.clear()
      container.removeEventListener('message', onMessage)
    },
  }
}
