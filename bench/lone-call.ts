// npm run bench:lone-call [-- --runs N] — issue 15's lone call over real HTTP, in real time.
//
// One call through the shipped `createClient()` (default options, a fresh lane) against a
// local HTTP server on 127.0.0.1 that answers 429 to its first F attempts and 200 after,
// for F = 1, 2, 3, 5, first with bare 429s (status-only), then with `Retry-After: 1` on
// each. The bounds are the issue's: max(2 s, 2 × the mean time exponential backoff needs
// for F failures), and 2 × what exponential backoff honouring Retry-After: 1 needs
// (test/client/lone-call.test.ts holds the same on a manual clock). Every call is a fresh
// client and server, so all runs go at once: the bench takes as long as its slowest call,
// and a call still unsettled at 4 × its bound is cut off and counted as a miss.
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { createClient } from '../src/client/create-client.js'
import { textTable } from '../src/sim/live/text-table.js'

// Exponential backoff (the paper's UB) waits U(0.1 s, 2^n − 1 s) after failure n: mean totals
// 0.55, 2.1, 5.65 and 28.75 s for F = 1, 2, 3, 5, doubled and at least 2 s. Honouring
// Retry-After: 1 it waits max(1 s, that draw): mean totals 1.0, 2.69, 6.30 and 29.4 s, doubled.
const CASES = [
  { failures: 1, statusOnlyBoundMs: 2_000, retryAfterBoundMs: 2_000 },
  { failures: 2, statusOnlyBoundMs: 4_200, retryAfterBoundMs: 5_380 },
  { failures: 3, statusOnlyBoundMs: 11_300, retryAfterBoundMs: 12_600 },
  { failures: 5, statusOnlyBoundMs: 57_500, retryAfterBoundMs: 58_800 },
]

const { values: flags } = parseArgs({ options: { runs: { type: 'string', default: '5' } } })
const RUNS = Number(flags.runs)
if (!(Number.isInteger(RUNS) && RUNS >= 1 && RUNS <= 20)) throw new Error(`--runs must be a whole number in 1..20, got ${flags.runs}`)

interface CallResult {
  ms: number
  attempts: number
  ok: boolean
}

/** One lone call: a server scripted to refuse `failures` times, a fresh client, wall ms to the 200. */
async function loneCall(failures: number, headers: Record<string, string>, cutOffMs: number): Promise<CallResult> {
  let attempts = 0
  const server = createServer((req, res) => {
    attempts++
    req.resume()
    req.on('end', () => {
      if (attempts <= failures) res.writeHead(429, headers).end()
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const client = createClient()
  const started = performance.now()
  try {
    const response = await client.fetch(`http://127.0.0.1:${port}/lone`, { signal: AbortSignal.timeout(cutOffMs) })
    await response.arrayBuffer()
    return { ms: performance.now() - started, attempts, ok: response.status === 200 }
  } catch {
    return { ms: performance.now() - started, attempts, ok: false }
  } finally {
    await client.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

const loadBefore = loadavg().map((l) => l.toFixed(2)).join(' ')
const started = performance.now()
const jobs = CASES.flatMap((c) =>
  (['status-only', 'retry-after'] as const).map(async (feedback) => {
    const boundMs = feedback === 'status-only' ? c.statusOnlyBoundMs : c.retryAfterBoundMs
    const headers: Record<string, string> = feedback === 'retry-after' ? { 'retry-after': '1' } : {}
    const calls = await Promise.all(Array.from({ length: RUNS }, () => loneCall(c.failures, headers, 4 * boundMs)))
    const times = calls.map((call) => call.ms).sort((a, b) => a - b)
    const floorMs = feedback === 'retry-after' ? c.failures * 1_000 : 0
    const pass = calls.every((call) => call.ok && call.attempts === c.failures + 1 && call.ms <= boundMs && call.ms >= floorMs)
    return {
      failures: c.failures,
      feedback,
      boundMs,
      runs: RUNS,
      medianMs: Math.round(times[times.length >> 1]!),
      maxMs: Math.round(times.at(-1)!),
      minMs: Math.round(times[0]!),
      failedCalls: calls.filter((call) => !call.ok).length,
      pass,
    }
  }),
)
const rows = await Promise.all(jobs)
const wallS = Math.round((performance.now() - started) / 1000)
const loadAfter = loadavg().map((l) => l.toFixed(2)).join(' ')

console.log(`lone call, default createClient(), ${RUNS} runs per line, all at once; ${wallS} s wall; load average ${loadBefore} before, ${loadAfter} after`)
console.log(
  textTable(
    ['F', 'feedback', 'min s', 'median s', 'max s', 'bound s', 'failed calls', 'pass'],
    rows.map((r) => [r.failures, r.feedback, r.minMs / 1000, r.medianMs / 1000, r.maxMs / 1000, r.boundMs / 1000, r.failedCalls, r.pass ? 'yes' : 'NO']),
  ),
)
mkdirSync('bench/results', { recursive: true })
writeFileSync('bench/results/lone-call.json', `${JSON.stringify({ runs: RUNS, wallS, loadAverage: { before: loadBefore, after: loadAfter }, rows }, null, 2)}\n`)
console.log('\nwrote bench/results/lone-call.json')
