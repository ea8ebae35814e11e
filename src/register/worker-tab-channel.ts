// The tab protocol's wire to the service worker, for a page the worker does not control
// (after a hard reload): posts go to the registration's active worker, answers come back
// as `message` events on navigator.serviceWorker. The worker leads every scope for it.
import { tabChannelOver, type TabChannel } from '../tabs/tab-channel.js'

export function workerTabChannel(
  container: ServiceWorkerContainer,
  worker: ServiceWorker,
  onError: (error: unknown) => void,
): TabChannel {
  return tabChannelOver(
    {
      receive(onData) {
        const onMessage = (event: MessageEvent) => onData(event.data)
        container.addEventListener('message', onMessage)
        return () => container.removeEventListener('message', onMessage)
      },
      send: (message) => worker.postMessage(message),
    },
    onError,
  )
}
