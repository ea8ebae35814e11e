// npm run bench:burst — one lane, many concurrent callers, one token bucket: how long a
// burst of requests takes to get through, and how many 429s it costs. This is the SDK's
// everyday case (a page or a script fires N requests at once at an API it knows nothing
// about), not the paper's fleet of sequential clients.
//
// Pure virtual time: the real pacers (`atb()`, and UB's `exponential()` for comparison)
// against an in-process token bucket, status-only 429s, a 20 ms round trip, requests
// FIFO with retries back at the head, at most `inFlight` attempts at once. Deterministic;
// runs in well under a second. Writes bench/results/burst.json.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { atb, exponential } from '../src/core/pacers/index.js'
import type { Signal, Strategy } from '../src/core/types.js'
import { textTable } from '../src/sim/live/text-table.js'

const RTT_MS = 20

interface Case {
  requests: number
  capacity: number
  perSecond: number
  inFlight: number
}

const CASES: Case[] = [
  { requests: 12, capacity: 5, perSecond: 10, inFlight: 12 },
  { requests: 50, capacity: 5, perSecond: 10, inFlight: 12 },
  { requests: 200, capacity: 10, perSecond: 10, inFlight: 16 },
  // A script's Promise.all over 100 items: with 8 connections (the simulator's concurrent
  // client), and with nothing capping them (undici's default Agent).
  { requests: 100, capacity: 10, perSecond: 10, inFlight: 8 },
  { requests: 100, capacity: 10, perSecond: 10, inFlight: 100 },
  { requests: 100, capacity: 20, perSecond: 2, inFlight: 8 },
  { requests: 30, capacity: 1, perSecond: 1, inFlight: 4 },
  // A loop awaiting each call: one in flight, so every rate the lane reads at its first 429s
  // spans a fraction of a second.
  { requests: 60, capacity: 20, perSecond: 20, inFlight: 1 },
  { requests: 200, capacity: 10, perSecond: 10, inFlight: 1 },
]

interface Outcome {
  seconds: number
  attempts: number
  throttled: number
}

function run(strategy: Strategy, c: Case, seed: number): Outcome {
  let state = seed
  const random = () => (state = (state * 16807) % 2147483647) / 2147483647
  const pacer = strategy.create({ now: 0, random })
  let tokens = c.capacity
  let refilledAt = 0
  const admit = (now: number): boolean => {
    tokens = Math.min(c.capacity, tokens + ((now - refilledAt) / 1000) * c.perSecond)
    refilledAt = now
    if (tokens < 1) return false
    tokens -= 1
    return true
  }
  interface Job { failures: number; notBefore: number }
  const queue: Job[] = Array.from({ length: c.requests }, () => ({ failures: 0, notBefore: 0 }))
  const pending: Array<{ at: number; ok: boolean; job: Job }> = []
  let now = 0
  let inFlight = 0
  let done = 0
  let attempts = 0
  let throttled = 0
  const waitOf = (job: Job): number => Math.max(pacer.delayMs(now, 1), job.notBefore - now)
  // Bounded: every iteration either sends, answers or advances time.
  for (let step = 0; step < 1_000_000 && done < c.requests; step++) {
    while (inFlight < c.inFlight && queue.length > 0 && waitOf(queue[0]!) <= 0) {
      const job = queue.shift()!
      pacer.onSend(now, 1)
      attempts++
      inFlight++
      pending.push({ at: now + RTT_MS, ok: admit(now), job })
    }
    pending.sort((a, b) => a.at - b.at)
    const head = queue[0]
    const nextSend = head !== undefined && inFlight < c.inFlight ? now + Math.max(1, waitOf(head)) : Infinity
    const answer = pending[0]
    if (answer !== undefined && answer.at <= nextSend) {
      pending.shift()
      now = answer.at
      inFlight--
      const signal: Signal = answer.ok ? { kind: 'ok', status: 200 } : { kind: 'throttled', status: 429 }
      pacer.onResult(now, signal)
      if (answer.ok) {
        done++
      } else {
        throttled++
        answer.job.failures++
        answer.job.notBefore = now + (pacer.retryDelayMs?.(now, answer.job.failures, signal) ?? 0)
        queue.unshift(answer.job)
      }
    } else if (nextSend < Infinity) {
      now = nextSend
    } else {
      break
    }
  }
  if (done < c.requests) throw new Error(`bench:burst did not finish ${JSON.stringify(c)}`)
  return { seconds: +(now / 1000).toFixed(1), attempts, throttled }
}

const strategies: Array<[string, () => Strategy]> = [
  ['polite-fetch', () => atb()],
  ['exponential', () => exponential()],
]
const rows = CASES.map((c) => {
  const ideal = Math.max(0, (c.requests - c.capacity) / c.perSecond)
  const results = Object.fromEntries(strategies.map(([name, make]) => [name, run(make(), c, 1)]))
  return { ...c, idealSeconds: +ideal.toFixed(1), results }
})

console.log(
  textTable(
    ['requests', 'bucket', 'in flight', 'ideal s', 'polite s', 'polite 429s', 'UB s', 'UB 429s'],
    rows.map((r) => [
      r.requests,
      `${r.capacity} @ ${r.perSecond}/s`,
      r.inFlight,
      r.idealSeconds,
      r.results['polite-fetch']!.seconds,
      r.results['polite-fetch']!.throttled,
      r.results.exponential!.seconds,
      r.results.exponential!.throttled,
    ]),
  ),
)
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'burst.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify({ rttMs: RTT_MS, rows }, null, 2) + '\n')
console.log(`\nwrote ${out}`)
