// Paired A/B of two builds of the telemetry server, in ONE process, under bench:telemetry's load.
//
// Why: on this shared 2-core VM reports/s of one run differs from the next by a third, so
// comparing a change against a figure measured earlier says little. Here both builds are
// loaded side by side (say the base commit's dist/ and ours), and the rounds alternate
// A B B A A B …, each a fresh server with a fresh memory store under the same load from a
// second process. The metric is the server process's CPU per answered report, which other
// load on the machine moves far less than throughput; each build's median and the median of
// the per-pair ratios B ÷ A are printed.
//
//   npx tsx bench/telemetry-paired.ts <dirA> <dirB> [pairs]
//   e.g. npx tsx bench/telemetry-paired.ts /tmp/base/dist/src/server dist/src/server 8
import { fork } from 'node:child_process'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadavg } from 'node:os'
import type { LoadResult } from './telemetry-load.js'

const [dirA, dirB, pairsArg] = process.argv.slice(2)
if (!dirA || !dirB) {
  console.error('usage: tsx bench/telemetry-paired.ts <server dir A> <server dir B> [pairs]')
  process.exit(2)
}
const PAIRS = Number(pairsArg ?? 6)
const TOKEN = 'bench-token' // bench/telemetry.ts's load sends this token

type Serve = typeof import('../src/server/serve.js').serve
type MemoryStore = typeof import('../src/server/memory-store.js').createMemoryStore

async function build(dir: string): Promise<{ serve: Serve; createMemoryStore: MemoryStore }> {
  const base = pathToFileURL(`${resolve(dir)}/`).href
  const { serve } = await import(`${base}serve.js`) as { serve: Serve }
  const { createMemoryStore } = await import(`${base}memory-store.js`) as { createMemoryStore: MemoryStore }
  return { serve, createMemoryStore }
}

interface Run { usPerReport: number; perSecond: number; failed: number; ok: number }

async function runOnce(server: { serve: Serve; createMemoryStore: MemoryStore }): Promise<Run> {
  const running = await server.serve({
    port: 0,
    options: {
      store: server.createMemoryStore(), auth: { tokens: { [TOKEN]: { tenant: 'bench', scopes: '*' } } }, rateLimit: false,
      quotas: { 'https://api-0.example.com': { perMinute: 80 } },
    },
  })
  try {
    let cpuStart = process.cpuUsage()
    const result = await new Promise<LoadResult>((done, reject) => {
      const child = fork(new URL('./telemetry.ts', import.meta.url).pathname, ['--load', running.url], { execArgv: ['--import', 'tsx'] })
      child.on('message', (message: LoadResult | 'measuring') => {
        if (message === 'measuring') cpuStart = process.cpuUsage()
        else done(message)
      })
      child.once('error', reject)
      child.once('exit', (code) => { if (code !== 0) reject(new Error(`load process exited with ${code}`)) })
    })
    const cpu = process.cpuUsage(cpuStart)
    return { usPerReport: (cpu.user + cpu.system) / Math.max(1, result.ok), perSecond: Math.round((result.ok / result.elapsedMs) * 1000), failed: result.failed, ok: result.ok }
  } finally {
    await running.close()
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const a = await build(dirA)
const b = await build(dirB)
const runsA: Run[] = []
const runsB: Run[] = []
const ratios: number[] = []
console.log(`paired A/B, ${PAIRS} pairs; A = ${dirA}, B = ${dirB}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`)
for (let i = 0; i < PAIRS; i++) {
  // Alternate which build goes first, so a drift in the machine's load falls on both alike.
  const first = i % 2 === 0
  const ra = first ? await runOnce(a) : undefined
  const rb = await runOnce(b)
  const rA = ra ?? await runOnce(a)
  runsA.push(rA)
  runsB.push(rb)
  ratios.push(rb.usPerReport / rA.usPerReport)
  console.log(`pair ${i + 1}: A ${rA.usPerReport.toFixed(1)} µs/rep ${rA.perSecond}/s (failed ${rA.failed}) · B ${rb.usPerReport.toFixed(1)} µs/rep ${rb.perSecond}/s (failed ${rb.failed}) · B/A ${(rb.usPerReport / rA.usPerReport).toFixed(3)} · load ${loadavg()[0]!.toFixed(2)}`)
}
console.log(`median µs/rep: A ${median(runsA.map((r) => r.usPerReport)).toFixed(1)}, B ${median(runsB.map((r) => r.usPerReport)).toFixed(1)}; median B/A ${median(ratios).toFixed(3)}; median reports/s A ${median(runsA.map((r) => r.perSecond))}, B ${median(runsB.map((r) => r.perSecond))}`)
console.log(`failed: A ${runsA.reduce((s, r) => s + r.failed, 0)}, B ${runsB.reduce((s, r) => s + r.failed, 0)}`)
process.exit(0)
