// The server half of bench:telemetry-memory's `server` phase: the compiled handler core and
// memory store (dist/, from `npm run build`), run by plain `node` as a deployed
// `polite-fetch telemetry-server` runs, so this process's RSS is the server's alone: no tsx,
// no load generator. The bench (its parent) builds the reports and sends them over IPC in
// batches, as a socket would deliver them; this process turns each into bytes, answers it
// through the core, and reports process.memoryUsage() when asked. Plain JS so that plain
// node runs it without a loader.
import { createMemoryStore, createTelemetryCore } from '../dist/src/server/index.js'

const TOKEN = process.env.BENCH_TOKEN
const T0 = Number(process.env.BENCH_T0)
const FLOOD_PER_SECOND = Number(process.env.BENCH_FLOOD_PER_SECOND)
const IN_FLIGHT = 64
const store = createMemoryStore()
let clock = T0
const core = createTelemetryCore({ store, auth: { tokens: { [TOKEN]: { tenant: 'flooder', scopes: '*' } } }, rateLimit: false, now: () => clock })
const encoder = new TextEncoder()
const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }
const usage = () => process.memoryUsage()

/** Answer one batch: `first` is the flood index of `bodies[0]`, which sets the virtual clock. */
async function batch({ first, bodies, addresses }) {
  const statuses = {}
  let next = 0
  const worker = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      clock = T0 + Math.floor(((first + i) * 1000) / FLOOD_PER_SECOND)
      const body = encoder.encode(bodies[i])
      const out = await core({ method: 'POST', target: '/v1/report', header: (name) => headers[name] ?? null, body: async () => body, remoteAddress: addresses[i] })
      statuses[out.status] = (statuses[out.status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  return { statuses, usage: first % 20_000 === 0 ? usage() : undefined }
}

/** After the flood: a full GC, 5 s idle, another GC, as the in-process phase does. */
async function settle() {
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 5_000))
  globalThis.gc?.()
  return { usage: usage(), gauges: await store.gauges(clock, ['flooder']) }
}

process.on('message', (message) => {
  const work = message.type === 'batch' ? batch(message) : message.type === 'settle' ? settle() : Promise.resolve({ usage: usage() })
  work.then((reply) => process.send({ id: message.id, ...reply }), (error) => process.send({ id: message.id, error: String(error) }))
})
process.send({ id: 0, usage: usage() })
