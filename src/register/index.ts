// `polite-fetch/register`: the page side of the service-worker deployment.
export { registerPoliteFetch } from './register-polite-fetch.js'
export type { PoliteFetchMode, PoliteFetchRegistration, PoliteFetchStats, RegisterOptions } from './register-polite-fetch.js'
export type { WorkerInfo } from '../protocol/worker-messages.js'
export type { TabLaneInfo } from '../tabs/create-tab-limiter.js'
