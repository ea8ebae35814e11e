// The in-memory store's own bounds: what a caller can make it hold.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { serve } from '../../src/server/serve.js'
import type { RunningServer } from '../../src/server/serve.js'

// Count the aggregators the store builds (one per tenant it holds).
const built = vi.hoisted(() => ({ count: 0 }))
vi.mock('../../src/telemetry/aggregator.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/telemetry/aggregator.js')>()
  return {
    ...actual,
    createAggregator: (...args: Parameters<typeof actual.createAggregator>) => {
      built.count++
      return actual.createAggregator(...args)
    },
  }
})

const { createMemoryStore } = await import('../../src/server/memory-store.js')

describe('memory store', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('holds no tenant for reads of invented tenants (open endpoint, ?tenant=)', async () => {
    const store = createMemoryStore()
    const before = built.count
    server = await serve({ port: 0, options: { store, auth: false } })
    // Before the fix each read built an aggregator for its tenant (about 8 KiB each, kept for good).
    for (let i = 0; i < 300; i++) {
      const reply = await fetch(`${server.url}/v1/aggregate?scope=api&tenant=invented-${i}`)
      expect(reply.status).toBe(200)
      expect(await reply.json()).toMatchObject({ activeClients: 1, totalAttempts: 0 })
    }
    expect(built.count - before).toBe(0)
    // ...and the endpoint still serves a report, on the one tenant of an open endpoint.
    const report = await fetch(`${server.url}/v1/report`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ v: 1, scope: 'api', clientId: 'c1', attempts: 3, throttled: 0 }),
    })
    expect(report.status).toBe(200)
    expect(built.count - before).toBe(1)
    const read = await fetch(`${server.url}/v1/aggregate?scope=api&tenant=open`)
    expect(await read.json()).toMatchObject({ totalAttempts: 3 })
  })
})
