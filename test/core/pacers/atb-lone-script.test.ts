// A lone script on a slow quota: one sequential client calling back to back (the commonest use of
// a fetch wrapper: a loop over items). It drains the quota in seconds, as a fast quota would drain
// under a fleet, so a pacer that reads a short drain as a fast quota probes a slow quota at the
// fast quota's pace. The default must stay well below exponential backoff's 429s here whatever the
// quota's time scale: this is the counter-case every fast-quota rule is checked against (a drain
// rule tried in session 10 took the 60/hour case from 36 to 1,186 429s, exponential: 275).
import { describe, expect, it } from 'vitest'
import { DEFAULT_ORIGIN_MS, runSimulation } from '../../../src/sim/run-simulation.js'
import { createServerModel } from '../../../src/sim/servers/index.js'
import { REAL_SIGNAL_PATH } from '../../../src/sim/signal-path.js'
import { lookupStrategy } from '../../../src/sim/strategies.js'
import type { Feedback, QuotaConfig } from '../../../src/sim/types.js'

function run(strategy: string, quota: QuotaConfig, arrivalsMs: number[], feedback: Feedback) {
  const workload = { scenario: 'lone-script', requests: arrivalsMs.length, clients: [{ id: 0, startMs: 0, arrivalsMs }] }
  return runSimulation({
    workload,
    server: createServerModel('token-bucket-continuous', quota, DEFAULT_ORIGIN_MS),
    feedback,
    strategy: lookupStrategy(strategy)!.setup({ clients: 1, quota, seed: 1 }),
    clientModel: 'paper',
    signalPath: REAL_SIGNAL_PATH,
    seed: 1,
    maxDurationMs: 48 * 3600_000,
  })
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
