// Throughput and latency of the telemetry endpoint (`npm run bench:telemetry`).
//
// The server (node:http fast path, bearer auth on) runs in this process; the load comes
// from a SECOND process (child_process.fork of this file with --load) over 127.0.0.1.
// The load generator (bench/telemetry-load.ts) writes pre-serialised HTTP/1.1 POSTs on
// raw sockets, several pipelined per keep-alive connection, and parses only status line
// and Content-Length: a fetch/undici client saturated its own core near 10k req/s here,
// which measured the client instead of the server. Each phase reports the CPU share the
// server process and the load process used, so a reader can tell which one was the limit, and
// the server's CPU per answered report (srv µs/rep), which other load on the machine moves far
// less than reports/s.
// Rows: "bare" (node:http doing nothing: the machine's ceiling for this loader), the
// in-memory store, then Redis (started here on a free port when /usr/bin/redis-server
// exists, otherwise skipped with a note). Per-client rate limits are off. The load is shaped
// like a fleet behind offices or NATs: each connection comes from its own loopback address
// (127.0.3.x) and carries its own 1,000 / CONNECTIONS client ids over the 10 scopes, so the
// server's per-address bounds (ids per address and scope, the median source) see the
// sources a deployment would, and every report is answered 200.
// Prints a table and writes bench/results/telemetry.json.
import { fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism, loadavg } from 'node:os'
import type { TelemetryRequest } from '../src/server/handle-telemetry.js'
import type { TelemetryStore } from '../src/server/telemetry-store.js'
import { hasRedisServer, startRedis } from '../test/e2e/helpers/redis-server.js'
import { BENCH_CLIENTS as CLIENTS, reportBody, runLoad as runLoadHere, serialisePost } from './telemetry-load.js'
import type { LoadResult } from './telemetry-load.js'

// The server measured is the compiled build users run (`npx polite-fetch telemetry-server`
// runs dist/; `npm run bench:telemetry` builds it first). Under tsx the source carries a helper
// call per named closure that the shipped code does not. BENCH_SOURCE=src measures src/ instead.
const SERVER_DIR = process.env.BENCH_SOURCE === 'src' ? '../src/server/' : '../dist/src/server/'
const { createTelemetryCore } = await import(`${SERVER_DIR}handle-telemetry.js`) as typeof import('../src/server/handle-telemetry.js')
const { createMemoryStore } = await import(`${SERVER_DIR}memory-store.js`) as typeof import('../src/server/memory-store.js')
const { createRedisStore } = await import(`${SERVER_DIR}redis-store.js`) as typeof import('../src/server/redis-store.js')
const { serve } = await import(`${SERVER_DIR}serve.js`) as typeof import('../src/server/serve.js')

const TOKEN = 'bench-token'
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 2_000)
// Runs per row; the row is the median run. On this 2-core VM single runs of the same
// server differ by up to 2x (scheduler placement of the two processes), so one run misleads.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const DEPTH = Number(process.env.BENCH_DEPTH ?? 16)


// ---- load generator (child process) ----
function load(url: string): Promise<LoadResult> {
  const { hostname, port, host } = new URL(url)
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }
  // CLIENTS distinct bodies: every client id appears, spread over all scopes; client i reports from address i % CONNECTIONS.
  const requests = Array.from({ length: CLIENTS }, (_, i) => serialisePost(host, '/v1/report', headers, reportBody(i)))
  const perConnection = Array.from({ length: CONNECTIONS }, (_, c) => ({
    localAddress: `127.0.3.${c + 1}`,
    requests: requests.filter((_, i) => i % CONNECTIONS === c),
  }))
  setTimeout(() => process.send!('measuring'), WARMUP_MS)
  return runLoadHere({
    host: hostname, port: Number(port), requests, perConnection, connections: CONNECTIONS, depth: DEPTH,
    durationMs: DURATION_MS, warmupMs: WARMUP_MS, maxSamples: 4_000_000,
  })
}

interface PhaseResult extends LoadResult { perSecond: number; serverCpuShare: number; serverUsPerReport: number; loadAverage1m: number }
type RowResult = PhaseResult & { runsPerSecond: number[]; failedAllRuns: number; medianUsPerReport: number }

async function runOnce(url: string): Promise<PhaseResult> {
  let cpuStart = process.cpuUsage()
  let wallStart = performance.now()
  const result = await new Promise<LoadResult>((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['--load', url], { execArgv: ['--import', 'tsx'] })
    child.on('message', (message: LoadResult | 'measuring') => {
      // The child says when its warm-up ends, so the server's CPU share covers the same window as its counts.
      if (message === 'measuring') {
        cpuStart = process.cpuUsage()
        wallStart = performance.now()
      } else {
        resolve(message)
      }
    })
    child.once('error', reject)
    child.once('exit', (code) => { if (code !== 0) reject(new Error(`load process exited with ${code}`)) })
  })
  const cpu = process.cpuUsage(cpuStart)
  const serverCpuShare = (cpu.user + cpu.system) / 1000 / (performance.now() - wallStart)
  // Server CPU per answered report: far less sensitive to other processes on the machine than reports/s.
  const serverUsPerReport = (cpu.user + cpu.system) / Math.max(1, result.ok)
  return { ...result, perSecond: Math.round((result.ok / result.elapsedMs) * 1000), serverCpuShare, serverUsPerReport, loadAverage1m: loadavg()[0]! }
}

/** ROUNDS load runs against the same server; the median run by throughput, with every run's rate. */
async function runLoad(url: string): Promise<RowResult> {
  const runs: PhaseResult[] = []
  for (let i = 0; i < ROUNDS; i++) runs.push(await runOnce(url))
  const sorted = [...runs].sort((a, b) => a.perSecond - b.perSecond)
  const us = runs.map((r) => r.serverUsPerReport).sort((a, b) => a - b)
  return {
    ...sorted[Math.floor((sorted.length - 1) / 2)]!, runsPerSecond: runs.map((r) => r.perSecond),
    failedAllRuns: runs.reduce((sum, r) => sum + r.failed, 0), medianUsPerReport: us[Math.floor((us.length - 1) / 2)]!,
  }
}

function row(name: string, r: RowResult, note = ''): void {
  console.log(`${name.padEnd(8)} ${String(r.perSecond).padStart(10)} ${r.p50Ms.toFixed(2).padStart(8)} ${r.p99Ms.toFixed(2).padStart(8)} ${String(r.ok).padStart(9)} ${String(r.failed).padStart(7)} ${r.serverCpuShare.toFixed(2).padStart(7)} ${r.loaderCpuShare.toFixed(2).padStart(7)} ${r.medianUsPerReport.toFixed(1).padStart(10)} ${r.loadAverage1m.toFixed(2).padStart(6)}  [${r.runsPerSecond.join(', ')}]${note}`)
}

async function phase(name: string, store: TelemetryStore): Promise<RowResult> {
  const server = await serve({
    port: 0,
    options: { store, auth: { tokens: { [TOKEN]: { tenant: 'bench', scopes: '*' } } }, rateLimit: false, quotas: { 'https://api-0.example.com': { perMinute: 80 } } },
  })
  try {
    const result = await runLoad(server.url)
    row(name, result)
    return result
  } finally {
    await server.close()
  }
}

/** The handler core alone, in process (no sockets): what one CPU core can do when the network is not the limit. */
async function inProcess(count: number): Promise<number> {
  const core = createTelemetryCore({ store: createMemoryStore(), auth: { tokens: { [TOKEN]: { tenant: 'bench', scopes: '*' } } }, rateLimit: false })
  const encoder = new TextEncoder()
  const bodies = Array.from({ length: CLIENTS }, (_, i) => encoder.encode(reportBody(i)))
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    const body = bodies[i % bodies.length]!
    const request: TelemetryRequest = {
      method: 'POST', target: '/v1/report', header: (name) => headers[name] ?? null, body: async () => body,
      remoteAddress: `127.0.3.${((i % bodies.length) % CONNECTIONS) + 1}`,
    }
    const out = await core(request)
    if (out.status !== 200) throw new Error(`unexpected ${out.status}`)
  }
  return Math.round((count / (performance.now() - started)) * 1000)
}

/** Calibration: a bare node:http server that reads the body and answers 200, under the same load. */
async function bareBaseline(): Promise<RowResult> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => { res.writeHead(200, { 'content-length': 2 }); res.end('{}') })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const result = await runLoad(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    row('bare', result, '  (node:http doing nothing: the ceiling with this loader)')
    return result
  } finally {
    await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections() })
  }
}

const round2 = (n: number) => Number(n.toFixed(2))

async function main(): Promise<void> {
  console.log(`telemetry endpoint: ${CONNECTIONS} keep-alive connections x ${DEPTH} pipelined requests from a second process (raw sockets), ${WARMUP_MS} ms warm-up + ${DURATION_MS} ms per run, median of ${ROUNDS} runs per row, ${availableParallelism()} CPUs`)
  console.log(`${'store'.padEnd(8)} ${'reports/s'.padStart(10)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'ok'.padStart(9)} ${'failed'.padStart(7)} ${'srv cpu'.padStart(7)} ${'ldr cpu'.padStart(7)} ${'srv µs/rep'.padStart(10)} ${'load1m'.padStart(6)}`)
  const bare = await bareBaseline()
  const memory = await phase('memory', createMemoryStore())
  const results: Record<string, number | string | null> = {
    memoryReportsPerSec: memory.perSecond,
    memoryP99Ms: round2(memory.p99Ms),
    redisReportsPerSec: null,
    redisP99Ms: null,
    memoryP50Ms: round2(memory.p50Ms),
    memoryRunsPerSec: memory.runsPerSecond.join(' '),
    memoryFailed: memory.failed,
    memoryFailedAllRuns: memory.failedAllRuns,
    memoryServerCpuShare: round2(memory.serverCpuShare),
    memoryServerUsPerReport: Number(memory.medianUsPerReport.toFixed(1)),
    memoryLoaderCpuShare: round2(memory.loaderCpuShare),
    bareNodeHttpPerSec: bare.perSecond,
    bareServerUsPerReport: Number(bare.medianUsPerReport.toFixed(1)),
    bareP99Ms: round2(bare.p99Ms),
    bareRunsPerSec: bare.runsPerSecond.join(' '),
    loader: `node:net raw sockets, ${CONNECTIONS} connections x ${DEPTH} pipelined, one source address (127.0.3.x) per connection, ${DURATION_MS} ms after ${WARMUP_MS} ms warm-up, median of ${ROUNDS} runs`,
    cpus: availableParallelism(),
  }
  if (hasRedisServer()) {
    const redis = await startRedis()
    // A saturated benchmark queues commands: allow more than the production 250 ms before failing.
    const store = createRedisStore({ url: redis.url, commandTimeoutMs: 2_000 })
    for (let i = 0; i < 100 && store.client.status !== 'ready'; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    try {
      const result = await phase('redis', store)
      results.redisReportsPerSec = result.perSecond
      results.redisP99Ms = round2(result.p99Ms)
      results.redisP50Ms = round2(result.p50Ms)
      results.redisRunsPerSec = result.runsPerSecond.join(' ')
      results.redisFailed = result.failed
      results.redisFailedAllRuns = result.failedAllRuns
      results.redisServerCpuShare = round2(result.serverCpuShare)
      results.redisServerUsPerReport = Number(result.medianUsPerReport.toFixed(1))
      results.redisLoaderCpuShare = round2(result.loaderCpuShare)
    } finally {
      await store.close()
      await redis.stop()
    }
  } else {
    console.log('redis    skipped: /usr/bin/redis-server not found (apt-get install redis-server)')
    results.note = 'redis skipped: redis-server not installed'
  }
  results.loadAverage1m = round2(loadavg()[0]!)
  results.inProcessCoreReportsPerSec = await inProcess(100_000)
  console.log(`in-process handler core (memory store, no sockets): ${results.inProcessCoreReportsPerSec} reports/s`)
  console.log('srv cpu / ldr cpu: share of one core used by the server process / the load process (1.00 = saturated); srv µs/rep: server process CPU per answered report (median run); [..]: every run')
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
