import { createClient } from './src/client/create-client.js'
import { startQuotaServer } from './src/sim/quota-server.js'
import { atb } from './src/core/pacers/index.js'
const k = 15
const strategy = () => atb({ windowMs: 60000/k, minSpanMs: 10000/k, growthPerSecond: 0.02*k, maxRetryBackoffMs: 60000/k, paceWindowMs: 10000/k, calmAfterMs: 600000/k })
const data = new Map<string, unknown>()
const store = { get: async (key: string) => structuredClone(data.get(key)), set: async (key: string, v: unknown) => void data.set(key, structuredClone(v)) }
const quota = await startQuotaServer({ feedback: 'status-only', quota: { capacity: 20, perMinute: 80 }, timeScale: k })
let client = createClient({ strategy: strategy(), store, persistIntervalMs: 250 })
async function window(ms: number) {
  const r0 = quota.stats().rejected
  const end = performance.now() + ms
  const lane = async () => { while (performance.now() < end) { const r = await client.fetch(`${quota.url}/api/x`); await r.arrayBuffer() } }
  await Promise.all(Array.from({ length: 4 }, lane))
  return quota.stats().rejected - r0
}
await window(8000) // warm up like the 3-tab phase
for (let i = 0; i < 6; i++) {
  const before = await window(10000)
  await new Promise((r) => setTimeout(r, 600))
  await client.close()
  client = createClient({ strategy: strategy(), store, persistIntervalMs: 250 })
  const after = await window(10000)
  console.log('pair', i, before, after)
}
await client.close(); await quota.close()
