// A lone script on a slow quota: one sequential client calling back to back (the commonest use of
// a fetch wrapper: a loop over items). It drains the quota in seconds, as a fast quota would drain
// under a fleet, so a pacer that reads a short drain as a fast quota probes a slow quota at the
// fast quota's pace. The default must stay well below exponential backoff's 429s here whatever the
// quota's time scale: this is the counter-case every fast-quota rule is checked against (a drain
// rule tried in session 10 took the 60/hour case from 36 to 1,186 429s, exponential: 275).
import { describe, expect, it } from 'vitest'
import { oracleSchedule } from '../../../src/sim/oracle.js'
import { DEFAULT_ORIGIN_MS, runSimulation } from '../../../src/sim/run-simulation.js'
import { createServerModel } from '../../../src/sim/servers/index.js'
import { REAL_SIGNAL_PATH } from '../../../src/sim/signal-path.js'
import { lookupStrategy } from '../../../src/sim/strategies.js'
import type { Feedback, QuotaConfig, ServerKind } from '../../../src/sim/types.js'

const loneWorkload = (arrivalsMs: number[]) => ({ scenario: 'lone-script', requests: arrivalsMs.length, clients: [{ id: 0, startMs: 0, arrivalsMs }] })

function run(strategy: string, quota: QuotaConfig, arrivalsMs: number[], feedback: Feedback, kind: ServerKind = 'token-bucket-continuous') {
  return runSimulation({
    workload: loneWorkload(arrivalsMs),
    server: createServerModel(kind, quota, DEFAULT_ORIGIN_MS),
    feedback,
    strategy: lookupStrategy(strategy)!.setup({ clients: 1, quota, seed: 1 }),
    clientModel: 'paper',
    signalPath: REAL_SIGNAL_PATH,
    seed: 1,
    maxDurationMs: 48 * 3600_000,
  })
}

/** The oracle's completion for the same lone script. */
function oracleMs(quota: QuotaConfig, arrivalsMs: number[], kind: ServerKind = 'token-bucket-continuous'): number {
  return oracleSchedule({ workload: loneWorkload(arrivalsMs), server: createServerModel(kind, quota, DEFAULT_ORIGIN_MS), clientModel: 'paper' }).completionMs
}

const CASES: Array<{ name: string; quota: QuotaConfig; arrivalsMs: number[] }> = [
  { name: '400 calls back to back on 100 per 75 s', quota: { capacity: 100, perMinute: 80 }, arrivalsMs: Array(400).fill(0) },
  { name: '50 calls a second for 60 s on 100 per 75 s', quota: { capacity: 100, perMinute: 80 }, arrivalsMs: Array.from({ length: 3000 }, (_, i) => i * 20) },
  { name: '100 calls back to back on 60 per hour', quota: { capacity: 60, perMinute: 1 }, arrivalsMs: Array(100).fill(0) },
]

describe('atb: a lone script hammering a slow quota', () => {
  for (const feedback of ['status-only', 'retry-after'] as const) {
    for (const c of CASES) {
      // Status-only, exponential backoff sends blind; with Retry-After it waits as told and is
      // already near the floor (40 429s on 60 per hour), so there the line is "no more than it".
      const share = feedback === 'status-only' ? 0.25 : 1
      it(`${c.name} (${feedback}): at most ${share} × exponential backoff's 429s, as fast`, () => {
        const ub = run('exponential', c.quota, c.arrivalsMs, feedback)
        const pf = run('atb', c.quota, c.arrivalsMs, feedback)
        expect(pf.incomplete).toBe(false)
        expect(pf.throttled).toBeLessThanOrEqual(share * ub.throttled)
        expect(pf.completionMs).toBeLessThanOrEqual(1.1 * ub.completionMs)
      })
    }
  }
})

// The same loop on a fast quota: it drains the bucket in a fraction of a second, so every rate it
// reads at its first 429s spans less than the 10 s `minSpanMs` floor. Read over the floor (time
// before the lane's first admission, which it never watched), 60 calls on 20/s took 24 s and 200
// on 10/s 134 s (status-only; with Retry-After 24.5 s and 203 s), where exponential backoff takes
// 2.2 s and 20 s. Over the span the lane watched: 2.3 s and 19.3 s; with Retry-After 3.2 s and
// 41.9 s, where a failed probe's deep cut (0.3 of what got through: in a fleet, what it regained was
// another lane's) took the lane below the quota; a lane that drained the quota itself skips it: 20.6 s.
// (`raWithin`: the 2.2 s run pays one whole-second Retry-After, 3.2 s.)
const FAST: Array<{ name: string; quota: QuotaConfig; arrivalsMs: number[]; raWithin: number }> = [
  { name: '60 calls back to back on 20 per second', quota: { capacity: 20, perMinute: 1200 }, arrivalsMs: Array(60).fill(0), raWithin: 1.5 },
  { name: '200 calls back to back on 10 per second', quota: { capacity: 10, perMinute: 600 }, arrivalsMs: Array(200).fill(0), raWithin: 1.1 },
]

describe('atb: a lone script on a fast quota', () => {
  for (const c of FAST) {
    it(`${c.name} (status-only): as fast as exponential backoff, at most a quarter of its 429s (or one)`, () => {
      const ub = run('exponential', c.quota, c.arrivalsMs, 'status-only')
      const pf = run('atb', c.quota, c.arrivalsMs, 'status-only')
      expect(pf.incomplete).toBe(false)
      expect(pf.completionMs).toBeLessThanOrEqual(1.1 * ub.completionMs)
      expect(pf.throttled).toBeLessThanOrEqual(Math.max(1, 0.25 * ub.throttled))
    })
    it(`${c.name} (retry-after): within ${c.raWithin} × exponential backoff's time, no more 429s`, () => {
      const ub = run('exponential', c.quota, c.arrivalsMs, 'retry-after')
      const pf = run('atb', c.quota, c.arrivalsMs, 'retry-after')
      expect(pf.incomplete).toBe(false)
      expect(pf.completionMs).toBeLessThanOrEqual(c.raWithin * ub.completionMs)
      expect(pf.throttled).toBeLessThanOrEqual(ub.throttled)
    })
  }
})

describe('atb: a lone script on the paper quota with Retry-After', () => {
  // 300 calls back to back on 100 per 75 s, a 429 answered with Retry-After: 1. The lane grows past
  // the quota and meets a 429: in a fleet that says what it regained was another lane's, and it cut
  // to 0.3 of what got through (1.30 × the oracle); a lane that drained the quota itself did not.
  it('within 1.1 × the oracle (was 1.30 ×), far fewer 429s than exponential backoff', () => {
    const quota = { capacity: 100, perMinute: 80 }
    const arrivalsMs = Array<number>(300).fill(0)
    const ub = run('exponential', quota, arrivalsMs, 'retry-after')
    const pf = run('atb', quota, arrivalsMs, 'retry-after')
    expect(pf.incomplete).toBe(false)
    expect(pf.completionMs).toBeLessThanOrEqual(1.1 * oracleMs(quota, arrivalsMs))
    expect(pf.throttled).toBeLessThanOrEqual(0.1 * ub.throttled)
  })
})

// The same loop on quotas that come back in lumps: a fixed window, a sliding log, a bucket refilled
// every minute, a sliding-window counter (100 per 75 s, status-only). The loop drains the quota
// itself, then meets 429s until the next window or step; each cut the rate ×1/8 (a fleet's lane
// reads them as others spending its share), and on the quota's return the lane regrew from a
// fraction of a unit per minute: 2.41 × the oracle on the fixed window, where exponential backoff
// takes 1.03 ×. Now it resumes at half the rate it had when the dry spell began.
describe('atb: a lone script on a quota that comes back in lumps', () => {
  const LUMPY: Array<{ kind: ServerKind; before: number; within: number }> = [
    { kind: 'fixed-window', before: 2.41, within: 1.8 },
    { kind: 'sliding-window-log', before: 2.47, within: 1.8 },
    { kind: 'token-bucket-stepped', before: 1.87, within: 1.3 },
    { kind: 'sliding-window-counter', before: 1.58, within: 1.15 },
  ]
  for (const { kind, before, within } of LUMPY) {
    it(`${kind}: 300 calls back to back within ${within} × the oracle (was ${before} ×), at most exponential backoff's 429s`, () => {
      const quota = { capacity: 100, perMinute: 80 }
      const arrivalsMs = Array<number>(300).fill(0)
      const pf = run('atb', quota, arrivalsMs, 'status-only', kind)
      const ub = run('exponential', quota, arrivalsMs, 'status-only', kind)
      expect(pf.incomplete).toBe(false)
      expect(pf.completionMs).toBeLessThanOrEqual(within * oracleMs(quota, arrivalsMs, kind))
      expect(pf.throttled).toBeLessThanOrEqual(ub.throttled)
    })
  }
})

describe('atb: a lone script on a slow token bucket with Retry-After', () => {
  // 100 per 12.5 minutes (the paper quota × 10): a 429 names the next unit, 8 s away. Spent as a
  // lump, that unit went to the next call as soon as the one before was answered, and every call
  // met a 429 (200 of them, as exponential backoff). A lump that brings one unit to a lane that
  // drained the quota itself says the quota trickles back: the lane paces again.
  it('300 calls back to back: within 1.02 × the oracle, at most a tenth of exponential backoff\'s 429s', () => {
    const quota = { capacity: 100, perMinute: 8 }
    const arrivalsMs = Array<number>(300).fill(0)
    const ub = run('exponential', quota, arrivalsMs, 'retry-after')
    const pf = run('atb', quota, arrivalsMs, 'retry-after')
    expect(pf.incomplete).toBe(false)
    expect(pf.completionMs).toBeLessThanOrEqual(1.02 * oracleMs(quota, arrivalsMs))
    expect(pf.throttled).toBeLessThanOrEqual(0.1 * ub.throttled)
  })
})
