// Memory of the telemetry endpoint under a scope-and-id flood from ONE tenant token
// (`npm run bench:telemetry-memory`): 20,000 scopes × 100 client ids, 2,000,000 reports,
// driven in process through the handler core with the request rate limits off, spread over
// 250 source addresses (one address alone would stop at its 256 scopes; 250 make the
// tenant's own caps, 10,000 scopes and 100,000 ids, the bound that holds). Once with the
// memory store (the process's peak RSS), once with Redis (its used_memory, peak and at
// the end). Targets: both ≤ 256 MiB. Time is virtual: the flood runs at FLOOD_PER_SECOND
// reports per second of the server's clock however fast this machine is, so scopes do not
// age out during a slow run and the caps, not the 70 s idle window, are what bound memory
// (Redis keys get a TTL longer than the run for the same reason). Run with --expose-gc (the npm script does) so the
// settled RSS follows a full collection. Prints a table and writes bench/results/telemetry-memory.json.
import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createTelemetryCore } from '../src/server/handle-telemetry.js'
import type { TelemetryRequest } from '../src/server/handle-telemetry.js'
import { createMemoryStore } from '../src/server/memory-store.js'
import { createRedisStore } from '../src/server/redis-store.js'
import type { TelemetryStore } from '../src/server/telemetry-store.js'
import { hasRedisServer, startRedis } from '../test/e2e/helpers/redis-server.js'

const TOKEN = 'flood-token'
const SCOPES = Number(process.env.BENCH_SCOPES ?? 20_000)
const IDS = Number(process.env.BENCH_IDS ?? 100)
const ADDRESSES = 250
const IN_FLIGHT = 64
/** The flood's rate on the server's (virtual) clock: 2,000,000 reports in 100 s. */
const FLOOD_PER_SECOND = 20_000
const T0 = Date.now()
const MiB = 1024 * 1024
/**
 * Phases, `memory,server,redis` by default: `memory` drives the memory store in this process
 * (tsx and the load generator share its RSS); `server` runs the compiled memory store in a
 * child started with plain `node` (as a deployment runs it; `npm run build` first) and
 * measures that child's RSS; `redis` the Redis store. On a busy machine the Redis phase alone
 * can take many minutes.
 */
const STORES = new Set((process.env.BENCH_STORES ?? 'memory,server,redis').split(','))

interface Outcome { statuses: Record<number, number>; seconds: number; peakRssMiB: number; peak: Breakdown; scopesGauge: number; trackedGauge: number }

/** process.memoryUsage() in MiB: where the RSS is (V8 heap in use and reserved, off-heap buffers). */
interface Breakdown { rssMiB: number; heapUsedMiB: number; heapTotalMiB: number; externalMiB: number; arrayBuffersMiB: number }

function breakdown(): Breakdown {
  const usage = process.memoryUsage()
  return { rssMiB: usage.rss / MiB, heapUsedMiB: usage.heapUsed / MiB, heapTotalMiB: usage.heapTotal / MiB, externalMiB: usage.external / MiB, arrayBuffersMiB: usage.arrayBuffers / MiB }
}

/** The larger of each figure (sampled at the same moments, so the peaks need not coincide). */
function maxOf(a: Breakdown, b: Breakdown): Breakdown {
  return { rssMiB: Math.max(a.rssMiB, b.rssMiB), heapUsedMiB: Math.max(a.heapUsedMiB, b.heapUsedMiB), heapTotalMiB: Math.max(a.heapTotalMiB, b.heapTotalMiB), externalMiB: Math.max(a.externalMiB, b.externalMiB), arrayBuffersMiB: Math.max(a.arrayBuffersMiB, b.arrayBuffersMiB) }
}

/** RSS once the flood is over: a full GC when node runs with --expose-gc, then 5 s idle (V8 hands back unused heap pages). */
async function settledMemory(): Promise<Breakdown> {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  await new Promise((resolve) => setTimeout(resolve, 5_000))
  gc?.()
  return breakdown()
}

async function flood(store: TelemetryStore, sample: () => Promise<void>): Promise<Outcome> {
  let next = 0
  const now = () => T0 + Math.floor((next * 1000) / FLOOD_PER_SECOND)
  const core = createTelemetryCore({ store, auth: { tokens: { [TOKEN]: { tenant: 'flooder', scopes: '*' } } }, rateLimit: false, now })
  const encoder = new TextEncoder()
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }
  const statuses: Record<number, number> = {}
  let peak = breakdown()
  const total = SCOPES * IDS
  const started = performance.now()
  const worker = async () => {
    for (let n = next++; n < total; n = next++) {
      const scope = Math.floor(n / IDS)
      const body = encoder.encode(JSON.stringify({ v: 1, scope: `https://flood-${scope}.example`, clientId: `id-${n % IDS}-${scope}`, attempts: 5, throttled: 1, backlog: 16 }))
      const request: TelemetryRequest = {
        method: 'POST', target: '/v1/report', header: (name) => headers[name] ?? null, body: async () => body,
        remoteAddress: `10.0.${scope % ADDRESSES}.1`,
      }
      const out = await core(request)
      statuses[out.status] = (statuses[out.status] ?? 0) + 1
      if (n % 20_000 === 0) {
        peak = maxOf(peak, breakdown())
        await sample()
      }
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  peak = maxOf(peak, breakdown())
  await sample()
  const gauges = await store.gauges?.(now(), ['flooder']) ?? {}
  return { statuses, seconds: (performance.now() - started) / 1000, peakRssMiB: peak.rssMiB, peak, scopesGauge: gauges.scopes ?? NaN, trackedGauge: gauges.tracked_clients ?? NaN }
}

const fmt = (n: number) => n.toFixed(1)

async function main(): Promise<void> {
  console.log(`memory under a flood from one token: ${SCOPES} scopes x ${IDS} ids = ${SCOPES * IDS} reports over ${ADDRESSES} addresses, in process, rate limits off, ${FLOOD_PER_SECOND} reports per second of the server's clock`)
  const results: Record<string, unknown> = { scopes: SCOPES, idsPerScope: IDS, addresses: ADDRESSES, floodPerSecond: FLOOD_PER_SECOND, nodeOptions: process.env.NODE_OPTIONS ?? '' }
  const baseline = process.memoryUsage().rss / MiB
  if (STORES.has('memory')) await memoryPhase(results, baseline)
  if (STORES.has('server')) await serverPhase(results)
  if (STORES.has('redis')) await redisPhase(results)
  mkdirSync('bench/results', { recursive: true })
  const path = `bench/results/telemetry-memory${STORES.size === 1 ? `-${[...STORES][0]}` : ''}.json`
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`)
  console.log(`wrote ${path}`)
}

async function memoryPhase(results: Record<string, unknown>, baseline: number): Promise<void> {
  const memoryStore = createMemoryStore()
  const memory = await flood(memoryStore, async () => {})
  const settled = await settledMemory()
  // The store is still referenced here, so what the GC kept includes everything it holds.
  const kept = await memoryStore.gauges?.(T0 + Math.floor((SCOPES * IDS * 1000) / FLOOD_PER_SECOND), ['flooder'])
  console.log(`memory store: RSS peak ${fmt(memory.peakRssMiB)} MiB, after the flood ${fmt(settled.rssMiB)} MiB (${fmt(baseline)} MiB before; live heap ${fmt(settled.heapUsedMiB)} MiB), ${kept?.scopes} scopes and ${kept?.tracked_clients} ids kept, statuses ${JSON.stringify(memory.statuses)}, ${fmt(memory.seconds)} s`)
  console.log(`  peak:    ${show(memory.peak)}\n  settled: ${show(settled)}`)
  Object.assign(results, {
    memoryPeak: round(memory.peak), memorySettled: round(settled),
    memoryPeakRssMiB: Number(fmt(memory.peakRssMiB)), memorySettledRssMiB: Number(fmt(settled.rssMiB)), memoryLiveHeapMiB: Number(fmt(settled.heapUsedMiB)),
    memoryBaselineRssMiB: Number(fmt(baseline)), memoryScopes: memory.scopesGauge, memoryTrackedIds: memory.trackedGauge, memoryStatuses: memory.statuses,
  })
}

const show = (b: Breakdown) => `rss ${fmt(b.rssMiB)}, heapUsed ${fmt(b.heapUsedMiB)}, heapTotal ${fmt(b.heapTotalMiB)}, external ${fmt(b.externalMiB)}, arrayBuffers ${fmt(b.arrayBuffersMiB)} MiB`
const round = (b: Breakdown) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, Number(fmt(v))]))
const toBreakdown = (usage: NodeJS.MemoryUsage): Breakdown => ({ rssMiB: usage.rss / MiB, heapUsedMiB: usage.heapUsed / MiB, heapTotalMiB: usage.heapTotal / MiB, externalMiB: usage.external / MiB, arrayBuffersMiB: usage.arrayBuffers / MiB })

interface ChildReply { id: number; usage?: NodeJS.MemoryUsage; statuses?: Record<number, number>; gauges?: Record<string, number>; error?: string }

/** The same flood against the memory store in its own `node` process; RSS is that process's. */
async function serverPhase(results: Record<string, unknown>): Promise<void> {
  const child: ChildProcess = fork(new URL('./telemetry-memory-server.mjs', import.meta.url), {
    execPath: process.execPath, execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_OPTIONS: '', BENCH_TOKEN: TOKEN, BENCH_T0: String(T0), BENCH_FLOOD_PER_SECOND: String(FLOOD_PER_SECOND) },
  })
  const waiting = new Map<number, (reply: ChildReply) => void>()
  child.on('message', (reply: ChildReply) => { waiting.get(reply.id)?.(reply); waiting.delete(reply.id) })
  let ids = 0
  const ask = (message: Record<string, unknown>) => new Promise<ChildReply>((resolve, reject) => {
    const id = ++ids
    waiting.set(id, (reply) => (reply.error ? reject(new Error(reply.error)) : resolve(reply)))
    child.send({ id, ...message })
  })
  try {
    await new Promise<void>((resolve, reject) => { waiting.set(0, () => resolve()); child.once('exit', (code) => reject(new Error(`server child exited ${code}`))) })
    const baseline = toBreakdown((await ask({ type: "usage" })).usage!)
    const statuses: Record<number, number> = {}
    let peak = baseline
    const total = SCOPES * IDS
    // Small batches, as a socket delivers reports: a large one would be old-generation garbage of its own.
    const BATCH = 1_000
    const started = performance.now()
    for (let first = 0; first < total; first += BATCH) {
      const bodies: string[] = []
      const addresses: string[] = []
      for (let n = first; n < Math.min(total, first + BATCH); n++) {
        const scope = Math.floor(n / IDS)
        bodies.push(JSON.stringify({ v: 1, scope: `https://flood-${scope}.example`, clientId: `id-${n % IDS}-${scope}`, attempts: 5, throttled: 1, backlog: 16 }))
        addresses.push(`10.0.${scope % ADDRESSES}.1`)
      }
      const reply = await ask({ type: 'batch', first, bodies, addresses })
      for (const [status, count] of Object.entries(reply.statuses ?? {})) statuses[Number(status)] = (statuses[Number(status)] ?? 0) + count
      if (first % 20_000 === 0) peak = maxOf(peak, toBreakdown(reply.usage!))
    }
    const seconds = (performance.now() - started) / 1000
    const end = await ask({ type: 'settle' })
    const settled = toBreakdown(end.usage!)
    console.log(`server process (plain node, dist/): RSS peak ${fmt(peak.rssMiB)} MiB, after the flood ${fmt(settled.rssMiB)} MiB (${fmt(baseline.rssMiB)} MiB before; live heap ${fmt(settled.heapUsedMiB)} MiB), ${end.gauges?.scopes} scopes and ${end.gauges?.tracked_clients} ids kept, statuses ${JSON.stringify(statuses)}, ${fmt(seconds)} s`)
    console.log(`  peak:    ${show(peak)}\n  settled: ${show(settled)}`)
    Object.assign(results, {
      serverPeak: round(peak), serverSettled: round(settled), serverBaseline: round(baseline),
      serverScopes: end.gauges?.scopes, serverTrackedIds: end.gauges?.tracked_clients, serverStatuses: statuses,
    })
  } finally {
    child.kill()
  }
}

async function redisPhase(results: Record<string, unknown>): Promise<void> {
  if (hasRedisServer()) {
    const redis = await startRedis()
    const store = createRedisStore({ url: redis.url, commandTimeoutMs: 5_000, keyTtlMs: 3_600_000 })
    for (let i = 0; i < 100 && store.client.status !== 'ready'; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await store.client.info('memory'))?.[1] ?? NaN)
    const empty = await usedMemory()
    let peak = 0
    try {
      const result = await flood(store, async () => { peak = Math.max(peak, await usedMemory()) })
      const end = await usedMemory()
      console.log(`redis store: used_memory peak ${fmt(peak / MiB)} MiB, at the end ${fmt(end / MiB)} MiB (${fmt(empty / MiB)} MiB empty), ${result.scopesGauge} scopes and ${result.trackedGauge} ids kept, statuses ${JSON.stringify(result.statuses)}, ${fmt(result.seconds)} s`)
      Object.assign(results, { redisUsedMemoryPeakMiB: Number(fmt(peak / MiB)), redisUsedMemoryEndMiB: Number(fmt(end / MiB)), redisEmptyMiB: Number(fmt(empty / MiB)), redisScopes: result.scopesGauge, redisTrackedIds: result.trackedGauge, redisStatuses: result.statuses })
    } finally {
      await store.close()
      await redis.stop()
    }
  } else {
    console.log('redis skipped: /usr/bin/redis-server not found')
  }
}

main().catch((error: unknown) => { console.error(error); process.exitCode = 1 })
