// The server side of bench/telemetry-instructions.ts: bench:telemetry's memory-store server
// from one build (argv[2] = its dist/src/server directory), on a free port printed to stdout.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const base = pathToFileURL(`${resolve(process.argv[2])}/`).href
const { serve } = await import(`${base}serve.js`)
const { createMemoryStore } = await import(`${base}memory-store.js`)
// Under valgrind a request waits in the pipeline ~50x longer than natively: the default 5 s
// and 10 s timeouts would cut the load's connections, so they are raised here (both builds alike).
const server = await serve({
  port: 0, headersTimeoutMs: 600_000, requestTimeoutMs: 600_000, keepAliveTimeoutMs: 600_000,
  options: {
    store: createMemoryStore(), auth: { tokens: { 'bench-token': { tenant: 'bench', scopes: '*' } } }, rateLimit: false,
    quotas: { 'https://api-0.example.com': { perMinute: 80 } },
  },
})
process.stdout.write(`${server.port}\n`)
// SIGINT ends the process normally, so `node --cpu-prof` writes its profile.
process.once('SIGINT', () => { server.close().then(() => process.exit(0)) })
