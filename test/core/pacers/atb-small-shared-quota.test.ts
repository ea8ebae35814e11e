// A small quota shared by as many lanes as it holds units: bench:shared-quota's fast configuration
// (20 sequential clients, a 20-token bucket refilling 10/s, 512 requests over 30 s) in virtual time.
// With the reserve held as 12% of the quota (2.4 of 20 units), 11.5% of attempts were refused with
// RateLimit headers and 15.7% with X-RateLimit, at every time scale (k = 1 and 10 alike): what the
// reserve absorbs is a count of other lanes' attempts, not a share of the quota (atb-quota.ts,
// reserveUnits). Over real HTTP the bench measured the same (11.4%, 13.7%).
import { describe, expect, it } from 'vitest'
import { atb } from '../../../src/core/pacers/atb.js'
import { absorbGuidance, emptyGuidance, noteSent, shareDelayMs } from '../../../src/core/pacers/atb-quota.js'
import type { Signal } from '../../../src/core/types.js'
import { DEFAULT_ORIGIN_MS, runSimulation } from '../../../src/sim/run-simulation.js'
import { scaleRun } from '../../../src/sim/scale-run.js'
import { PAPER_WINDOW_MS, syntheticScenario } from '../../../src/sim/scenarios.js'
import { tokenBucket } from '../../../src/sim/servers/token-bucket.js'
import { REAL_SIGNAL_PATH } from '../../../src/sim/signal-path.js'
import type { Feedback } from '../../../src/sim/types.js'
import { generateWorkload, type Workload } from '../../../src/sim/workload.js'

const fast = syntheticScenario(20, 512, 30_000)
const QUOTA = { capacity: 20, perMinute: 600 }

/** The bench's workload: the paper's start stagger shrunk with the 30 s window. */
function benchWorkload(seed: number): Workload {
  const workload = generateWorkload(fast, seed)
  const factor = fast.windowMs / PAPER_WINDOW_MS
  return {
    ...workload,
    clients: workload.clients.map((c) => {
      const shift = c.startMs * (1 - factor)
      return { ...c, startMs: c.startMs - shift, arrivalsMs: c.arrivalsMs.map((t) => t - shift) }
    }),
  }
}

function refusedShare(feedback: Feedback, k: number, seeds: number[]): { share: number; completionMs: number } {
  let attempts = 0
  let throttled = 0
  let completionMs = 0
  for (const seed of seeds) {
    const run = scaleRun({ workload: benchWorkload(seed), quota: QUOTA, maxDurationMs: 3_600_000 }, k)
    const metrics = runSimulation({
      workload: run.workload,
      server: tokenBucket({ ...run.quota, now: DEFAULT_ORIGIN_MS }),
      feedback,
      strategy: { strategy: atb() },
      clientModel: 'paper',
      signalPath: REAL_SIGNAL_PATH,
      seed,
      maxDurationMs: run.maxDurationMs,
    })
    expect(metrics.incomplete).toBe(false)
    attempts += metrics.attempts
    throttled += metrics.throttled
    completionMs += metrics.completionMs / k
  }
  return { share: throttled / attempts, completionMs: completionMs / seeds.length }
}

describe('atb: 20 lanes on a 20-token bucket refilling 10/s (bench:shared-quota --config fast, virtual time)', () => {
  for (const feedback of ['ratelimit', 'x-ratelimit'] as const) {
    for (const k of [1, 10]) {
      it(`${feedback}, every time × ${k}: at most 1% of attempts refused, done within the quota's time`, () => {
        const { share, completionMs } = refusedShare(feedback, k, [1, 2, 3])
        expect(share).toBeLessThanOrEqual(0.01)
        // The quota admits 20 + 10/s: 512 requests need 49.2 s; exponential backoff takes ~62 s.
        expect(completionMs).toBeLessThanOrEqual(55_000)
      })
    }
  }
})

describe('atb quota share: the reserve on a small shared quota is held in units', () => {
  const T0 = 1_700_000_000_000
  // 20 units per 2 s, a continuous bucket: its reset is the missing units over 10/s, in whole seconds.
  const hint = (at: number, remaining: number): Signal => ({
    kind: 'ok',
    status: 200,
    remaining,
    resetAt: at + 2000,
    policies: [{ name: 'default', quota: 20, windowMs: 2000 }],
  })

  it('holds a lane back with 5 of 20 units left while the others keep the quota busy (12% of it, 2.4 units, did not)', () => {
    const guidance = emptyGuidance()
    // The lane sends once every 500 ms; the others spend the refill: `remaining` stays at 5.
    absorbGuidance(guidance, T0, hint(T0, 5))
    noteSent(guidance, 1, T0 + 10)
    absorbGuidance(guidance, T0 + 500, hint(T0 + 500, 5))
    const delayMs = shareDelayMs(guidance, T0 + 500, 1, T0 + 10)
    expect(guidance.shared).toBe(true)
    // The fleet spends 10/s, the refill: with 2.4 held back its target was 10 + 2.6 / 0.8 s, so the
    // lane went at once; with 12 held back the fleet's target is 10 − 7 / 0.8 s = 1.25/s, and this
    // lane's part of it (2 of the fleet's 10/s) is one send every 4 s, capped at 0.8 windows.
    expect(delayMs).toBeCloseTo(1600 - 490, 6)
  })

  it('keeps the share of the quota for a lone lane (its fleet is itself)', () => {
    const guidance = emptyGuidance()
    absorbGuidance(guidance, T0, hint(T0, 10))
    for (let i = 0; i < 5; i++) noteSent(guidance, 1, T0 + 10 + i)
    // Five sent, five fewer left, less the 0.5 s refill: the only spender is this lane.
    absorbGuidance(guidance, T0 + 500, hint(T0 + 500, 10))
    expect(shareDelayMs(guidance, T0 + 500, 1, T0 + 14)).toBe(0)
    expect(guidance.shared ?? false).toBe(false)
  })
})
