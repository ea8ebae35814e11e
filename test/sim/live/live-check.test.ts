import { describe, expect, it } from 'vitest'
import { DRAW_SEED_STRIDE, runLiveCheck } from '../../../src/sim/live/live-check.js'
import { DEFAULT_ORIGIN_MS, runSimulation } from '../../../src/sim/run-simulation.js'
import { syntheticScenario } from '../../../src/sim/scenarios.js'
import { createServerModel } from '../../../src/sim/servers/index.js'
import { REAL_SIGNAL_PATH } from '../../../src/sim/signal-path.js'
import { lookupStrategy } from '../../../src/sim/strategies.js'
import { generateWorkload } from '../../../src/sim/workload.js'

// A small overloaded run: 4 clients, 60 requests in one model minute on a 10-token,
// 20-per-minute quota, time compressed x100 (well under a second of wall time each).
const base = {
  scenario: syntheticScenario(4, 60, 60_000),
  feedback: 'status-only' as const,
  seeds: [1],
  quota: { capacity: 10, perMinute: 20 },
  timeScale: 100,
}

describe('runLiveCheck', () => {
  it('runs each strategy in the simulator and for real on the same arrivals, one row each', async () => {
    const rows = await runLiveCheck({ ...base, strategies: ['exponential', 'atb'] })
    expect(rows.map((row) => row.strategy)).toEqual(['exponential', 'atb'])
    for (const row of rows) {
      expect(row).toMatchObject({ feedback: 'status-only', seeds: 1 })
      // The quota admits 10 + 20 of the 60 requests in the window: both sides meet 429s and both finish.
      expect(row.simThrottled).toBeGreaterThan(0)
      expect(row.liveThrottled).toBeGreaterThan(0)
      expect(row.simCompletionMs).toBeGreaterThan(60_000)
      expect(row.liveCompletionMs).toBeGreaterThan(60_000)
      expect(row.throttledDiffPct).toBeCloseTo(((row.liveThrottled - row.simThrottled) / row.simThrottled) * 100, 9)
      expect(row.completionDiffPct).toBeCloseTo(((row.liveCompletionMs - row.simCompletionMs) / row.simCompletionMs) * 100, 9)
    }
    // Exponential backoff wastes far more attempts than ATB on both sides.
    const [ub, polite] = rows as [(typeof rows)[0], (typeof rows)[0]]
    expect(polite.simThrottled).toBeLessThan(ub.simThrottled)
    expect(polite.liveThrottled).toBeLessThan(ub.liveThrottled)
  }, 60_000)

  it('compares the live run with the mean over several draws of the pacers\' randomness, not with one draw', async () => {
    // One simulated run per draw: same arrivals, the pacers seeded apart.
    const simulated = (pacerSeed: number) =>
      runSimulation({
        workload: generateWorkload(base.scenario, 1),
        server: createServerModel('token-bucket-continuous', base.quota, DEFAULT_ORIGIN_MS),
        feedback: 'status-only',
        strategy: lookupStrategy('atb')!.setup({ clients: 4, quota: base.quota, seed: 1 }),
        clientModel: 'paper',
        signalPath: REAL_SIGNAL_PATH,
        seed: pacerSeed,
      }).throttled
    const draws = [simulated(1), simulated(1 + DRAW_SEED_STRIDE), simulated(1 + 2 * DRAW_SEED_STRIDE)]
    expect(new Set(draws).size).toBeGreaterThan(1) // the draws differ, so averaging them matters
    const [row] = await runLiveCheck({ ...base, strategies: ['atb'], simDraws: 3 })
    expect(row!.simDraws).toBe(3)
    expect(row!.simThrottled).toBeCloseTo((draws[0]! + draws[1]! + draws[2]!) / 3, 9)
    await expect(runLiveCheck({ ...base, strategies: ['atb'], simDraws: 0 })).rejects.toThrow('simDraws')
  }, 60_000)

  it('runs both sides against the server model it is given', async () => {
    // A fixed window with RateLimit headers: the simulated side is the simulator's own run of that
    // model (one draw), which a continuous bucket of the same rate would not reproduce.
    const quota = { capacity: 10, perMinute: 20 }
    const simulated = (server: 'fixed-window' | 'token-bucket-continuous') =>
      runSimulation({
        workload: generateWorkload(base.scenario, 1),
        server: createServerModel(server, quota, DEFAULT_ORIGIN_MS),
        feedback: 'ratelimit',
        strategy: lookupStrategy('exponential')!.setup({ clients: 4, quota, seed: 1 }),
        clientModel: 'paper',
        signalPath: REAL_SIGNAL_PATH,
        seed: 1,
      })
    const [row] = await runLiveCheck({ ...base, feedback: 'ratelimit', quota, server: 'fixed-window', strategies: ['exponential'], simDraws: 1 })
    const window = simulated('fixed-window')
    expect(row!.simThrottled).toBe(window.throttled)
    expect(row!.simCompletionMs).toBe(window.completionMs)
    expect(simulated('token-bucket-continuous').completionMs).not.toBe(window.completionMs)
    expect(row!.liveThrottled).toBeGreaterThan(0)
  }, 60_000)

  it('rejects an unknown strategy and a telemetry strategy it cannot run live', async () => {
    await expect(runLiveCheck({ ...base, strategies: ['magic'] })).rejects.toThrow("unknown strategy 'magic'")
    await expect(runLiveCheck({ ...base, strategies: ['aatb'] })).rejects.toThrow('does not run telemetry strategies')
  })
})
