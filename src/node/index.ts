// `polite-fetch/node`: pace undici (`request`, `fetch`, Node's global `fetch`, SDKs
// built on undici) through the same limiter as `createClient`.
export { politeInterceptor, type PoliteInterceptor, type PoliteInterceptorOptions } from './interceptor.js'
export { politeAgent, type PoliteAgent, type PoliteAgentOptions } from './polite-agent.js'
export { install, type Installed, type InstallOptions } from './install.js'
export { BODY_NOT_REPLAYABLE } from './paced-dispatch.js'
export { fileStore, type FileStore, type FileStoreOptions } from '../storage/file-store.js'
export type { ClientTelemetryOptions } from '../client/client-telemetry.js'
