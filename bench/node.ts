// bench:node — what pacing costs when nothing is wrong. An unthrottled HTTP server
// runs in another process (so server work does not share our event loop); we compare
// a plain undici Agent with the same Agent composed with `politeInterceptor`:
//  - throughput at 64 concurrent requests on loopback, >= 5 interleaved runs each,
//    ratio of medians (target >= 0.95);
//  - added median latency at concurrency 1.
// Usage: npx tsx bench/node.ts [--runs 7] [--seconds 2] [--warm 2] [--serial 3000]
import { fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Agent, request, type Dispatcher } from 'undici'
import { politeInterceptor } from '../src/node/index.js'

const CONCURRENCY = 64

function serve(): void {
  const body = JSON.stringify({ ok: true })
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port })
  })
  process.on('disconnect', () => process.exit(0))
}

async function startServerProcess(): Promise<{ url: string; stop(): void }> {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], { execArgv: process.execArgv, stdio: 'inherit' })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)))
  })
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill() }
}

async function once(url: string, dispatcher: Dispatcher): Promise<void> {
  const res = await request(url, { dispatcher })
  await res.body.dump()
  if (res.statusCode !== 200) throw new Error(`unexpected status ${res.statusCode}`)
}

interface RunResult {
  requestsPerSecond: number
  /** CPU time of this (client) process per request, µs: steadier than throughput on a busy machine. */
  cpuMicrosPerRequest: number
}

/** `CONCURRENCY` callers looping for `seconds`. */
async function throughput(url: string, dispatcher: Dispatcher, seconds: number): Promise<RunResult> {
  const endAt = performance.now() + seconds * 1000
  let done = 0
  const worker = async (): Promise<void> => {
    while (performance.now() < endAt) {
      await once(url, dispatcher)
      done++
    }
  }
  const start = performance.now()
  const cpuStart = process.cpuUsage()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const cpu = process.cpuUsage(cpuStart)
  return {
    requestsPerSecond: done / ((performance.now() - start) / 1000),
    cpuMicrosPerRequest: (cpu.user + cpu.system) / done,
  }
}

/** Per-request latencies (µs) of `count` sequential requests. */
async function serialLatencies(url: string, dispatcher: Dispatcher, count: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    await once(url, dispatcher)
    out.push((performance.now() - start) * 1000)
  }
  return out
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '7' },
      seconds: { type: 'string', default: '2' },
      warm: { type: 'string', default: '2' },
      serial: { type: 'string', default: '3000' },
    },
  })
  const runs = Math.max(5, Number(values.runs))
  const seconds = Number(values.seconds)
  const warmSeconds = Number(values.warm)
  const serialCount = Number(values.serial)

  const server = await startServerProcess()
  const plain = new Agent({ connections: CONCURRENCY })
  const interceptor = politeInterceptor()
  const polite = new Agent({ connections: CONCURRENCY }).compose(interceptor)

  try {
    // Warm both: connections open, JIT settled (tsx compiles on first use).
    await throughput(server.url, plain, warmSeconds)
    await throughput(server.url, polite, warmSeconds)

    const plainRuns: RunResult[] = []
    const politeRuns: RunResult[] = []
    for (let run = 0; run < runs; run++) {
      // Interleaved, alternating who goes first, so drift (load, GC) hits both alike.
      if (run % 2 === 0) {
        plainRuns.push(await throughput(server.url, plain, seconds))
        politeRuns.push(await throughput(server.url, polite, seconds))
      } else {
        politeRuns.push(await throughput(server.url, polite, seconds))
        plainRuns.push(await throughput(server.url, plain, seconds))
      }
    }
    const plainRps = plainRuns.map((r) => r.requestsPerSecond)
    const politeRps = politeRuns.map((r) => r.requestsPerSecond)
    const plainCpu = median(plainRuns.map((r) => r.cpuMicrosPerRequest))
    const politeCpu = median(politeRuns.map((r) => r.cpuMicrosPerRequest))

    const plainLatency: number[] = []
    const politeLatency: number[] = []
    for (let round = 0; round < 4; round++) {
      plainLatency.push(...(await serialLatencies(server.url, plain, serialCount / 4)))
      politeLatency.push(...(await serialLatencies(server.url, polite, serialCount / 4)))
    }

    const throughputRatio = median(politeRps) / median(plainRps)
    const addedP50Micros = median(politeLatency) - median(plainLatency)
    const round = (n: number): number => Math.round(n)

    console.log(`\nbench:node — ${runs} interleaved runs × ${seconds}s at concurrency ${CONCURRENCY}, ${serialCount} serial requests, Node ${process.version}, ${availableParallelism()} CPUs\n`)
    console.log('| dispatcher              | median req/s | runs (req/s)                          | client CPU µs/req | p50 µs (c=1) |')
    console.log('|-------------------------|-------------:|---------------------------------------|------------------:|-------------:|')
    const row = (name: string, rps: number[], cpu: number, latency: number[]): string =>
      `| ${name.padEnd(23)} | ${round(median(rps)).toString().padStart(12)} | ${rps.map(round).join(' ').padEnd(37)} | ${cpu.toFixed(1).padStart(17)} | ${median(latency).toFixed(1).padStart(12)} |`
    console.log(row('undici Agent', plainRps, plainCpu, plainLatency))
    console.log(row('Agent + politeInterceptor', politeRps, politeCpu, politeLatency))
    console.log(`\nthroughput ratio (polite / plain, medians): ${throughputRatio.toFixed(3)} (target >= 0.95)`)
    console.log(`CPU-time ratio (plain / polite µs per request): ${(plainCpu / politeCpu).toFixed(3)}`)
    console.log(`added p50 at concurrency 1: ${addedP50Micros.toFixed(1)} µs\n`)

    const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'node.json')
    mkdirSync(dirname(out), { recursive: true })
    const result = {
      throughputRatio: Number(throughputRatio.toFixed(4)),
      addedP50Micros: Number(addedP50Micros.toFixed(1)),
      concurrency: CONCURRENCY,
      runs,
      secondsPerRun: seconds,
      plainRequestsPerSecond: plainRps.map(round),
      politeRequestsPerSecond: politeRps.map(round),
      plainCpuMicrosPerRequest: Number(plainCpu.toFixed(1)),
      politeCpuMicrosPerRequest: Number(politeCpu.toFixed(1)),
      cpuRatio: Number((plainCpu / politeCpu).toFixed(4)),
      plainP50Micros: Number(median(plainLatency).toFixed(1)),
      politeP50Micros: Number(median(politeLatency).toFixed(1)),
      node: process.version,
      cpus: availableParallelism(),
      loadAverage: loadavg().map((n) => Number(n.toFixed(2))),
      date: new Date().toISOString(),
    }
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
    console.log(`wrote ${out}`)
  } finally {
    await plain.close()
    await polite.close()
    await (interceptor.limiter as { close?(): unknown }).close?.()
    server.stop()
  }
}

if (process.argv.includes('--server')) serve()
else await main()
