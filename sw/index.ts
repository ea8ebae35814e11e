// `polite-fetch/sw`: run the limiter inside a service worker.
export { installPoliteFetch } from './install-polite-fetch.js'
export type { InstallOptions, PoliteFetchWorker } from './install-polite-fetch.js'
export type { Match, MatchRule, RequestPredicate } from './match.js'
export { PAGE_MESSAGE, WORKER_MESSAGE } from '../src/protocol/worker-messages.js'
export type { PageMessage, WorkerInfo, WorkerMessage } from '../src/protocol/worker-messages.js'
export { idbStore } from '../src/storage/idb-store.js'
