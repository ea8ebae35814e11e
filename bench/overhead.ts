// What polite-fetch costs when nothing is wrong: a loopback server that never
// throttles, in ANOTHER process (so its work does not share our event loop), and
// interleaved runs of the raw global fetch and `client.fetch` (raw, polite, raw,
// polite, …) so drift in the machine's state hits both alike. On Linux the client and
// the server are pinned to different cores (bench/pin-cpus.ts).
//
//   npm run bench:overhead            (tsx bench/overhead.ts [--runs N], N >= 5, default 61: two minutes;
//                                      21-round runs scatter by ±3% on the 2-core machine, 61-round ones by ±1%)
//
// Prints a table and writes bench/results/overhead.json:
//   throughputRatio     median polite req/s ÷ median raw req/s over the interleaved rounds, 64 concurrent
//                       (the ratio of medians, as the acceptance line states it; target ≥ 0.95)
//   addedP50Micros      median over runs of (polite p50 − raw p50) latency at concurrency 1 (target ≤ 50 µs)
//   bytesPerIdleScope   heap per idle lane, after gc, over many scopes (target ≤ 2 KB)
// and, for context (not targets):
//   throughputRatioPairedMedian     median over rounds of each round's polite ÷ raw (the same rounds, paired)
//   raw/politeCpuMicrosPerRequest   client CPU per request (median over rounds): the client process is the
//                       bottleneck at 64 in flight, and CPU time shrugs off scheduling stalls
//   bytesPerIdleScopeWithoutPacer   the same with one shared stateless pacer: the limiter's own share
//   cpuMicrosPerCall    in-process CPU cost of client.fetch over an instant fake fetch (no network),
//                       a steadier figure than the loopback ones on a busy machine
import { fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createClient, type Pacer, type Strategy } from '../src/index.js'
import { pinClientAndServer } from './pin-cpus.js'

const here = dirname(fileURLToPath(import.meta.url))
type Fetch = (input: string, init?: RequestInit) => Promise<Response>

function serve(): void {
  const body = Buffer.from('{"ok":true}')
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
    res.end(body)
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port })
  })
  process.on('disconnect', () => process.exit(0))
}

async function throughput(fetchImpl: Fetch, url: string, total: number, concurrency: number): Promise<number> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < total) {
      next++
      const response = await fetchImpl(url)
      await response.arrayBuffer()
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  return total / ((performance.now() - start) / 1_000)
}

async function latencyP50Micros(fetchImpl: Fetch, url: string, count: number): Promise<number> {
  const samples = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    const response = await fetchImpl(url)
    await response.arrayBuffer()
    samples[i] = (performance.now() - start) * 1_000
  }
  return median(Array.from(samples))
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

function gcFunction(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc
  if (typeof existing === 'function') return existing
  // Same effect as `node --expose-gc`, so the npm script needs no extra flags.
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}

/** One stateless pacer shared by every lane, so only the limiter's own per-scope memory is measured. */
const sharedPacer: Pacer = {
  delayMs: () => 0,
  onSend: () => {},
  onResult: () => {},
  toJSON: (now) => ({ kind: 'shared', version: 1, savedAt: now }),
  ratePerSecond: Infinity,
  tokens: () => Infinity,
}
const sharedStrategy: Strategy = { name: 'shared', create: () => sharedPacer }

async function bytesPerIdleScope(url: string, scopes: number, strategy?: Strategy): Promise<number> {
  const gc = gcFunction()
  const client = createClient(strategy === undefined ? {} : { strategy })
  // Warm the code paths first so compiled code and one-off caches are not counted.
  for (let i = 0; i < 64; i++) await (await client.fetch(url, { politeFetch: { scope: `warm-${i}` } })).arrayBuffer()
  gc()
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < scopes; i += 64) {
    await Promise.all(
      Array.from({ length: Math.min(64, scopes - i) }, async (_, j) => {
        const response = await client.fetch(url, { politeFetch: { scope: `https://tenant-${i + j}.example` } })
        await response.arrayBuffer()
      }),
    )
  }
  gc()
  gc()
  const after = process.memoryUsage().heapUsed
  const live = client.stats().length
  await client.close()
  return (after - before) / (live - 64)
}

async function cpuMicrosPerCall(calls: number): Promise<number> {
  const response = new Response('{"ok":true}')
  const instant = (): Promise<Response> => Promise.resolve(response)
  const client = createClient({ fetch: instant })
  const url = 'http://127.0.0.1:9/resource'
  const timeLoop = async (fetchImpl: (input: string) => Promise<Response>): Promise<number> => {
    const start = performance.now()
    for (let i = 0; i < calls; i++) await fetchImpl(url)
    return ((performance.now() - start) * 1_000) / calls
  }
  const samples: number[] = []
  for (let run = 0; run < 5; run++) samples.push((await timeLoop(client.fetch)) - (await timeLoop(instant)))
  await client.close()
  return median(samples)
}

async function main(): Promise<void> {
  const runsArg = process.argv.indexOf('--runs')
  const runs = Math.max(5, runsArg > 0 ? Number(process.argv[runsArg + 1]) || 61 : 61)
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port))
    child.once('error', reject)
  })
  const pinning = pinClientAndServer(child.pid)
  console.log(pinning.pinned ? `pinned: ${pinning.detail}` : `not pinned: ${pinning.detail}`)
  const url = `http://127.0.0.1:${port}/resource`
  const raw: Fetch = (input, init) => fetch(input, init)
  const client = createClient()
  const polite: Fetch = (input, init) => client.fetch(input, init)

  try {
    // Warm-up: connections, JIT, both paths.
    await throughput(raw, url, 2_000, 64)
    await throughput(polite, url, 2_000, 64)
    await latencyP50Micros(raw, url, 300)
    await latencyP50Micros(polite, url, 300)

    // Paired rounds: each round measures both paths back to back, in alternating order,
    // so drift in the machine's state (other processes, CPU frequency) hits both alike.
    // Each measurement is preceded by a short unmeasured slice of the same path, so it
    // starts from that path's own steady state rather than the other's garbage. No
    // forced gc: a full collection shrinks V8's young generation, and the next few
    // thousand requests then run with far more scavenges than any steady workload
    // (raw fetch measured 40% more CPU per request right after one on this machine).
    // The figure is the ratio of the medians (the per-round ratios' median is printed too).
    // Client CPU per request as well: the client process is the bottleneck at 64 in flight,
    // and CPU time is immune to the scheduling stalls that make wall-clock rounds swing.
    const cpuMicros = { raw: [] as number[], polite: [] as number[] }
    const measure = async (fetchImpl: Fetch): Promise<number> => {
      await throughput(fetchImpl, url, 500, 64)
      const before = process.cpuUsage()
      const rps = await throughput(fetchImpl, url, 3_000, 64)
      const used = process.cpuUsage(before)
      cpuMicros[fetchImpl === raw ? 'raw' : 'polite'].push((used.user + used.system) / 3_000)
      return rps
    }
    const rows: { run: number; rawRps: number; politeRps: number; rawP50: number; politeP50: number }[] = []
    for (let run = 1; run <= runs; run++) {
      let rawRps: number
      let politeRps: number
      if (run % 2 === 1) {
        rawRps = await measure(raw)
        politeRps = await measure(polite)
      } else {
        politeRps = await measure(polite)
        rawRps = await measure(raw)
      }
      const rawP50 = await latencyP50Micros(raw, url, 500)
      const politeP50 = await latencyP50Micros(polite, url, 500)
      rows.push({ run, rawRps, politeRps, rawP50, politeP50 })
    }
    const throughputRatio = median(rows.map((r) => r.politeRps)) / median(rows.map((r) => r.rawRps))
    const throughputRatioPairedMedian = median(rows.map((r) => r.politeRps / r.rawRps))
    const rawCpu = median(cpuMicros.raw)
    const politeCpu = median(cpuMicros.polite)
    const addedP50Micros = median(rows.map((r) => r.politeP50 - r.rawP50))
    const bytes = await bytesPerIdleScope(url, 5_000)
    const bytesWithoutPacer = await bytesPerIdleScope(url, 5_000, sharedStrategy)
    const cpu = await cpuMicrosPerCall(50_000)

    console.log('run  raw req/s  polite req/s  ratio   raw p50 µs  polite p50 µs  added µs')
    for (const r of rows) {
      console.log(
        `${String(r.run).padStart(3)}  ${r.rawRps.toFixed(0).padStart(9)}  ${r.politeRps.toFixed(0).padStart(12)}  ` +
          `${(r.politeRps / r.rawRps).toFixed(3).padStart(5)}  ${r.rawP50.toFixed(1).padStart(10)}  ` +
          `${r.politeP50.toFixed(1).padStart(13)}  ${(r.politeP50 - r.rawP50).toFixed(1).padStart(8)}`,
      )
    }
    const result = {
      throughputRatio: Number(throughputRatio.toFixed(4)),
      throughputRatioPairedMedian: Number(throughputRatioPairedMedian.toFixed(4)),
      rounds: runs,
      rawCpuMicrosPerRequest: Number(rawCpu.toFixed(1)),
      politeCpuMicrosPerRequest: Number(politeCpu.toFixed(1)),
      cpuThroughputRatio: Number((rawCpu / politeCpu).toFixed(4)),
      loadAverage: (await import('node:os')).loadavg().map((v) => Number(v.toFixed(2))),
      pinned: pinning.pinned,
      addedP50Micros: Number(addedP50Micros.toFixed(1)),
      bytesPerIdleScope: Math.round(bytes),
      bytesPerIdleScopeWithoutPacer: Math.round(bytesWithoutPacer),
      cpuMicrosPerCall: Number(cpu.toFixed(2)),
    }
    console.log('')
    console.log(`throughput ratio (ratio of medians, 64 concurrent): ${result.throughputRatio}   target >= 0.95`)
    console.log(`  median of the paired rounds' ratios:   ${result.throughputRatioPairedMedian}`)
    console.log(`  client CPU per request raw / polite:   ${result.rawCpuMicrosPerRequest} / ${result.politeCpuMicrosPerRequest} µs (ratio ${result.cpuThroughputRatio})`)
    console.log(`  load average:                          ${result.loadAverage.join(' ')}`)
    console.log(`added p50 latency (concurrency 1):       ${result.addedP50Micros} µs   target <= 50 µs`)
    console.log(`heap per idle scope:                      ${result.bytesPerIdleScope} B   target <= 2048 B`)
    console.log(`  of which not the pacer's:               ${result.bytesPerIdleScopeWithoutPacer} B`)
    console.log(`CPU per client.fetch over an instant fetch: ${result.cpuMicrosPerCall} µs`)
    const out = join(here, 'results', 'overhead.json')
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`)
    console.log(`wrote ${out}`)
  } finally {
    await client.close()
    child.kill()
  }
}

if (process.argv.includes('--serve')) serve()
else
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    },
  )
