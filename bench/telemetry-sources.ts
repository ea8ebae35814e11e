// What a report from a NEW source address costs the aggregator when its scope already holds
// N addresses (`npx tsx bench/telemetry-sources.ts`): the per-source bounds come from the
// median address, so each new address may move them. Before the bounds were kept in
// order-statistic trees, every such report sorted all N addresses' counts (and summed what
// each counted for under the new bounds): about 290 µs at 10,000 addresses, so an attacker
// with many addresses made every one of its reports O(N log N).
//
// In process, the pure aggregator alone (no HTTP): the scope is filled with N addresses of
// one client each, then rounds of new addresses report (one client each; the "+ hint" column:
// each with its own quota hint, which moves the median hint too), all within one 10 s active
// bucket so no sweep runs. A row is the median round's µs per report. The scope's caps are
// raised (ids per scope and in total) so 50,000 addresses are 50,000 sources: with the
// defaults, ids beyond 10,000 per scope share the overflow entry and cost no recount at all.
//
//   npx tsx bench/telemetry-sources.ts [label=dir ...]
//   e.g. npx tsx bench/telemetry-sources.ts before=/tmp/base/src/telemetry after=src/telemetry
// Each dir holds an aggregator.ts (or .js); without arguments, src/telemetry. With redis-server
// installed, the Redis store of the same build (dir/../server/redis-store) is measured too, at
// BENCH_REDIS_SIZES (default 1000,10000): Redis's own µs per script call (INFO commandstats,
// so no round trip), the script being where the sort ran. Prints a table and writes
// bench/results/telemetry-sources.json, keeping the rows of builds this run did not measure
// (so the code before, slow to fill at 50,000, can be measured in a run of its own).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { createRedisStore as CreateRedisStore } from '../src/server/redis-store.js'
import type { createAggregator as CreateAggregator } from '../src/telemetry/aggregator.js'
import type { TelemetryReport } from '../src/telemetry/protocol.js'
import { hasRedisServer, startRedis } from '../test/e2e/helpers/redis-server.js'

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,50000').split(',').map(Number)
/** BENCH_HINTS=0 leaves out the "+ hint" column (null in the JSON): filling 50,000 addresses with hints takes the code before over half an hour. */
const HINTS = process.env.BENCH_HINTS !== '0'
const REDIS_SIZES = (process.env.BENCH_REDIS_SIZES ?? '1000,10000').split(',').filter(Boolean).map(Number)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
/** New addresses per round: few against N, so N barely moves while measured. */
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 200)
const T0 = 1_700_000_000_000 // a multiple of 10 000: the run stays inside one active bucket
const QUOTA = 80 / 60

const targets = process.argv.slice(2).map((arg) => {
  const at = arg.indexOf('=')
  return at < 0 ? { label: arg, dir: arg } : { label: arg.slice(0, at), dir: arg.slice(at + 1) }
})
if (targets.length === 0) targets.push({ label: 'src', dir: 'src/telemetry' })

/** `name`'s exports from `dir`, as TypeScript source or as a build. */
async function load<T>(dir: string, name: string): Promise<T> {
  const base = pathToFileURL(`${resolve(dir)}/`).href
  try {
    return await import(`${base}${name}.ts`) as T
  } catch {
    return await import(`${base}${name}.js`) as T
  }
}

/** Address i as a dotted quad (10.x.y.z), so 50,000 addresses are 50,000 distinct sources. */
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
const report = (i: number, hint: boolean): TelemetryReport => ({
  v: 1, scope: 'https://api.example.com', clientId: `c${i}`, attempts: 1, throttled: 0, backlog: i % 5,
  ...(hint ? { quota: { quota: 60 + (i % 40), windowMs: 60_000 } } : {}),
})

/** Median over rounds of µs per new-address report, in a scope filled with `size` addresses. */
function measure(create: typeof CreateAggregator, size: number, hint: boolean): number {
  const aggregator = create({ maxClientsPerScope: 1_000_000, maxClients: 1_000_000 })
  for (let i = 0; i < size; i++) aggregator.record(report(i, hint), T0, QUOTA, { source: address(i) })
  const perReport: number[] = []
  let next = size
  for (let round = 0; round < ROUNDS; round++) {
    const reports = Array.from({ length: PER_ROUND }, (_, j) => ({ body: report(next + j, hint), from: { source: address(next + j) } }))
    next += PER_ROUND
    const started = performance.now()
    for (const { body, from } of reports) aggregator.record(body, T0 + 1, QUOTA, from)
    perReport.push(((performance.now() - started) * 1000) / PER_ROUND)
  }
  perReport.sort((a, b) => a - b)
  return perReport[Math.floor(perReport.length / 2)]!
}

/** Redis's µs per report script from a new address, scope filled with `size` addresses (median round). */
async function measureRedis(create: typeof CreateRedisStore, url: string, size: number, hint: boolean): Promise<number> {
  const prefix = `bench-${size}-${hint ? 'h' : 'p'}:`
  const store = create({ url, prefix, maxClientsPerScope: 1_000_000, maxClients: 1_000_000, commandTimeoutMs: 60_000 })
  for (let i = 0; i < 100 && store.client.status !== 'ready'; i++) await new Promise((done) => setTimeout(done, 20))
  const origin = (i: number) => ({ tenant: 't', source: address(i), trusted: false })
  try {
    for (let i = 0; i < size; i += 100) { // 100 at a time: ioredis pipelines them
      await Promise.all(Array.from({ length: Math.min(100, size - i) }, (_, j) => store.report(report(i + j, hint), T0, QUOTA, origin(i + j))))
    }
    const perReport: number[] = []
    let next = size
    for (let round = 0; round < ROUNDS; round++) {
      await store.client.config('RESETSTAT')
      for (let j = 0; j < PER_ROUND; j++, next++) await store.report(report(next, hint), T0 + 1, QUOTA, origin(next))
      const stats = await store.client.info('commandstats')
      perReport.push(Number(/cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(stats)?.[1]))
    }
    perReport.sort((a, b) => a - b)
    return perReport[Math.floor(perReport.length / 2)]!
  } finally {
    await store.client.flushdb()
    await store.close()
  }
}

const results: Record<string, Record<string, { plainUs: number; hintUs: number }>> = {}
console.log(`µs per report from a new address, scope holding N addresses; median of ${ROUNDS} rounds of ${PER_ROUND}`)
console.log(`${'build'.padEnd(10)} ${'N'.padStart(8)} ${'new addr'.padStart(10)} ${'+ hint'.padStart(10)}`)
for (const { label, dir } of targets) {
  const create = (await load<{ createAggregator: typeof CreateAggregator }>(dir, 'aggregator')).createAggregator
  // Warm-up (not shown): the first rows otherwise carry the JIT's compile time.
  measure(create, 1_000, false)
  if (HINTS) measure(create, 1_000, true)
  results[label] = {}
  for (const size of SIZES) {
    const plainUs = measure(create, size, false)
    const hintUs = HINTS ? measure(create, size, true) : NaN
    results[label]![size] = { plainUs: Number(plainUs.toFixed(2)), hintUs: Number(hintUs.toFixed(2)) }
    console.log(`${label.padEnd(10)} ${String(size).padStart(8)} ${plainUs.toFixed(2).padStart(10)} ${hintUs.toFixed(2).padStart(10)}`)
  }
}
const redisResults: Record<string, Record<string, { plainUs: number; hintUs: number }>> = {}
if (hasRedisServer() && REDIS_SIZES.length > 0) {
  const redis = await startRedis()
  try {
    console.log('redis: µs of Redis CPU per report script from a new address (INFO commandstats)')
    for (const { label, dir } of targets) {
      const create = (await load<{ createRedisStore: typeof CreateRedisStore }>(`${dir}/../server`, 'redis-store')).createRedisStore
      redisResults[label] = {}
      for (const size of REDIS_SIZES) {
        const plainUs = await measureRedis(create, redis.url, size, false)
        const hintUs = HINTS ? await measureRedis(create, redis.url, size, true) : NaN
        redisResults[label]![size] = { plainUs, hintUs }
        console.log(`${`${label} redis`.padEnd(10)} ${String(size).padStart(8)} ${plainUs.toFixed(2).padStart(10)} ${hintUs.toFixed(2).padStart(10)}`)
      }
    }
  } finally {
    await redis.stop()
  }
} else {
  console.log('redis skipped: /usr/bin/redis-server not found, or BENCH_REDIS_SIZES empty')
}
const path = 'bench/results/telemetry-sources.json'
const earlier = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) as { results?: typeof results; redis?: typeof redisResults } : {}
/** Rows of this run over the file's, build by build and size by size. */
const merge = (old: typeof results = {}, now: typeof results) => {
  const out = { ...old }
  for (const [label, rows] of Object.entries(now)) out[label] = { ...old[label], ...rows }
  return out
}
mkdirSync('bench/results', { recursive: true })
writeFileSync(path, `${JSON.stringify({
  rounds: ROUNDS, perRound: PER_ROUND, results: merge(earlier.results, results), redis: merge(earlier.redis, redisResults),
}, null, 2)}\n`)
console.log(`wrote ${path}`)
