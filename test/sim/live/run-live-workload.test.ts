// runLiveWorkload's count of settled requests and its wall-clock bound (the bench's fast
// configuration runs in real time with clients that never give up).
import { describe, expect, it } from 'vitest'
import { exponential } from '../../../src/core/pacers/index.js'
import { runLiveWorkload } from '../../../src/sim/live/run-live-workload.js'
import { syntheticScenario } from '../../../src/sim/scenarios.js'

const scenario = syntheticScenario(2, 6, 60_000)
// Two clients, three calls each: at 0, 5 and 30 model seconds.
const workload = {
  scenario: scenario.name,
  requests: 6,
  clients: [0, 1].map((id) => ({ id, startMs: 0, arrivalsMs: [0, 5_000, 30_000] })),
}
const common = { scenario, workload, seed: 1, feedback: 'status-only' as const, strategyName: 'exponential' }

describe('runLiveWorkload', () => {
  it('counts every settled request without a progress listener', async () => {
    const row = await runLiveWorkload({ ...common, strategy: exponential(), timeScale: 100 })
    expect(row).toMatchObject({ requests: 6, completed: 6, throttled: 0, attempts: 6 })
  })

  it('aborts the calls still unsettled at maxWallMs and reports how many completed', async () => {
    // At time x1 the second arrivals are 5 s away: the bound ends the run after the first two calls.
    const row = await runLiveWorkload({ ...common, strategy: exponential(), timeScale: 1, maxWallMs: 2_000 })
    expect(row.completed).toBe(2)
    expect(row.wallMs).toBeLessThan(4_500)
  })
})
