// Throughput and latency of the telemetry endpoint (`npm run bench:telemetry`).
//
// The server (node:http fast path, bearer auth on) runs in this process; the load comes
// from a SECOND process (child_process.fork of this file with --load) over 127.0.0.1,
// with keep-alive connections and a fixed number of requests in flight. Phase 1 uses
// the in-memory store; phase 2 Redis, started here on a free port when /usr/bin/redis-server
// exists (otherwise skipped with a note). Per-client rate limits are off: the load
// generator is one source sending for thousands of client ids.
// Prints a table and writes bench/results/telemetry.json.
import { fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, request } from 'undici'
import { createTelemetryCore } from '../src/server/handle-telemetry.js'
import type { TelemetryRequest } from '../src/server/handle-telemetry.js'
import { createMemoryStore } from '../src/server/memory-store.js'
import { createRedisStore } from '../src/server/redis-store.js'
import { serve } from '../src/server/serve.js'
import type { TelemetryStore } from '../src/server/telemetry-store.js'
import { hasRedisServer, startRedis } from '../test/e2e/helpers/redis-server.js'

const TOKEN = 'bench-token'
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000)
const MAX_REQUESTS = Number(process.env.BENCH_MAX_REQUESTS ?? 400_000)
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64)
const CONNECTIONS = 16
const CLIENTS = 2_000
const SCOPES = 10

interface LoadResult { requests: number; ok: number; failed: number; elapsedMs: number; p50Ms: number; p99Ms: number }

// ---- load generator (child process) ----
async function load(url: string): Promise<LoadResult> {
  const dispatcher = new Agent({ connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 10_000 })
  const bodies: string[] = []
  for (let i = 0; i < 512; i++) {
    bodies.push(JSON.stringify({
      v: 1, scope: `https://api-${i % SCOPES}.example.com`, clientId: `client-${(i * 7919) % CLIENTS}`,
      attempts: 1 + (i % 30), throttled: i % 11 === 0 ? 1 : 0, backlog: i % 5,
    }))
  }
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }
  const latencies = new Float64Array(MAX_REQUESTS)
  let issued = 0
  let ok = 0
  let failed = 0
  const started = performance.now()
  const deadline = started + DURATION_MS
  async function worker(): Promise<void> {
    while (issued < MAX_REQUESTS && performance.now() < deadline) {
      const index = issued++
      const t = performance.now()
      try {
        const response = await request(`${url}/v1/report`, { method: 'POST', headers, body: bodies[index % bodies.length], dispatcher })
        await response.body.dump()
        if (response.statusCode === 200) ok++
        else failed++
      } catch {
        failed++
      }
      latencies[index] = performance.now() - t
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  const elapsedMs = performance.now() - started
  await dispatcher.close()
  const sorted = latencies.slice(0, issued).sort()
  const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
  return { requests: issued, ok, failed, elapsedMs, p50Ms: quantile(0.5), p99Ms: quantile(0.99) }
}

function runLoad(url: string): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['--load', url], { execArgv: ['--import', 'tsx'] })
    child.once('message', (message) => resolve(message as LoadResult))
    child.once('error', reject)
    child.once('exit', (code) => { if (code !== 0) reject(new Error(`load process exited with ${code}`)) })
  })
}

async function phase(name: string, store: TelemetryStore): Promise<LoadResult> {
  const server = await serve({
    port: 0,
    options: { store, auth: { tokens: { [TOKEN]: { tenant: 'bench', scopes: '*' } } }, rateLimit: false, quotas: { 'https://api-0.example.com': { perMinute: 80 } } },
  })
  try {
    const result = await runLoad(server.url)
    const perSecond = Math.round((result.ok / result.elapsedMs) * 1000)
    console.log(`${name.padEnd(8)} ${String(perSecond).padStart(10)} ${result.p50Ms.toFixed(2).padStart(8)} ${result.p99Ms.toFixed(2).padStart(8)} ${String(result.ok).padStart(9)} ${String(result.failed).padStart(7)}`)
    return result
  } finally {
    await server.close()
  }
}

/** The handler core alone, in process (no sockets): what one CPU core can do when the network is not the limit. */
async function inProcess(count: number): Promise<number> {
  const core = createTelemetryCore({ store: createMemoryStore(), auth: { tokens: { [TOKEN]: { tenant: 'bench', scopes: '*' } } }, rateLimit: false })
  const encoder = new TextEncoder()
  const bodies = Array.from({ length: 512 }, (_, i) => encoder.encode(JSON.stringify({
    v: 1, scope: `https://api-${i % SCOPES}.example.com`, clientId: `client-${(i * 7919) % CLIENTS}`, attempts: 1 + (i % 30), throttled: i % 11 === 0 ? 1 : 0, backlog: i % 5,
  })))
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    const body = bodies[i % bodies.length]!
    const request: TelemetryRequest = { method: 'POST', target: '/v1/report', header: (name) => headers[name] ?? null, body: async () => body }
    const out = await core(request)
    if (out.status !== 200) throw new Error(`unexpected ${out.status}`)
  }
  return Math.round((count / (performance.now() - started)) * 1000)
}

/** Calibration: a bare node:http server that reads the body and answers 200, under the same load. */
async function bareBaseline(): Promise<LoadResult> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => { res.writeHead(200, { 'content-length': 2 }); res.end('{}') })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const result = await runLoad(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    const perSecond = Math.round((result.ok / result.elapsedMs) * 1000)
    console.log(`${'bare'.padEnd(8)} ${String(perSecond).padStart(10)} ${result.p50Ms.toFixed(2).padStart(8)} ${result.p99Ms.toFixed(2).padStart(8)} ${String(result.ok).padStart(9)} ${String(result.failed).padStart(7)}  (node:http doing nothing: the machine's ceiling)`)
    return result
  } finally {
    await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections() })
  }
}

async function main(): Promise<void> {
  console.log(`telemetry endpoint: ${IN_FLIGHT} requests in flight over ${CONNECTIONS} keep-alive connections from a second process, ${DURATION_MS} ms per store`)
  console.log(`${'store'.padEnd(8)} ${'reports/s'.padStart(10)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'ok'.padStart(9)} ${'failed'.padStart(7)}`)
  const bare = await bareBaseline()
  const memory = await phase('memory', createMemoryStore())
  const results: Record<string, number | string | null> = {
    memoryReportsPerSec: Math.round((memory.ok / memory.elapsedMs) * 1000),
    memoryP99Ms: Number(memory.p99Ms.toFixed(2)),
    redisReportsPerSec: null,
    redisP99Ms: null,
    bareNodeHttpPerSec: Math.round((bare.ok / bare.elapsedMs) * 1000),
    cpus: (await import('node:os')).availableParallelism(),
    loadAverage1m: Number((await import('node:os')).loadavg()[0]!.toFixed(2)),
  }
  if (hasRedisServer()) {
    const redis = await startRedis()
    // A saturated benchmark queues commands: allow more than the production 90 ms before failing.
    const store = createRedisStore({ url: redis.url, commandTimeoutMs: 2_000 })
    for (let i = 0; i < 100 && store.client.status !== 'ready'; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    try {
      const result = await phase('redis', store)
      results.redisReportsPerSec = Math.round((result.ok / result.elapsedMs) * 1000)
      results.redisP99Ms = Number(result.p99Ms.toFixed(2))
    } finally {
      await store.close()
      await redis.stop()
    }
  } else {
    console.log('redis    skipped: /usr/bin/redis-server not found (apt-get install redis-server)')
    results.note = 'redis skipped: redis-server not installed'
  }
  results.inProcessCoreReportsPerSec = await inProcess(100_000)
  console.log(`in-process handler core (memory store, no sockets): ${results.inProcessCoreReportsPerSec} reports/s`)
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/telemetry.json', `${JSON.stringify(results, null, 2)}\n`)
  console.log('wrote bench/results/telemetry.json')
}

if (process.argv[2] === '--load') {
  load(process.argv[3]!).then(
    (result) => process.send!(result, () => process.exit(0)),
    (error: unknown) => { console.error(error); process.exit(1) },
  )
} else {
  main().catch((error: unknown) => { console.error(error); process.exitCode = 1 })
}
