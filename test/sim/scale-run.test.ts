import { describe, expect, it } from 'vitest'
import { PAPER_QUOTA, normalizeSpec } from '../../src/sim/grid-spec.js'
import { oracleSchedule } from '../../src/sim/oracle.js'
import { runGrid } from '../../src/sim/run-grid.js'
import { scaleQuota, scaleRun, scaleWorkload } from '../../src/sim/scale-run.js'
import { scenarioByName } from '../../src/sim/scenarios.js'
import { createServerModel } from '../../src/sim/servers/index.js'
import { generateWorkload } from '../../src/sim/workload.js'

const scenario = scenarioByName('synthetic-5c-600')!

describe('scaleRun', () => {
  it('divides the quota rate by k and multiplies the step interval, arrivals, stagger and time limit by k', () => {
    const workload = generateWorkload(scenario, 3)
    const scaled = scaleRun({ workload, quota: PAPER_QUOTA, maxDurationMs: 6 * 3600_000 }, 60)
    expect(scaled.quota).toEqual({ capacity: 100, perMinute: 80 / 60, stepIntervalMs: 3_600_000 })
    expect(scaled.maxDurationMs).toBe(360 * 3600_000)
    scaled.workload.clients.forEach((c, i) => {
      const original = workload.clients[i]!
      expect(c.startMs).toBe(original.startMs * 60)
      expect(c.arrivalsMs).toEqual(original.arrivalsMs.map((t) => t * 60))
    })
    expect(scaled.workload.requests).toBe(workload.requests)
    // The stepped refill still lands 80 tokens at once, k times less often.
    expect((scaled.quota.perMinute * scaled.quota.stepIntervalMs!) / 60_000).toBeCloseTo(80, 9)
    // The input is not touched.
    expect(workload.clients[1]!.startMs).toBe(500)
  })

  it('fills in the default step interval, and rejects a scale that is not a positive number', () => {
    expect(scaleQuota({ capacity: 10, perMinute: 60 }, 0.5)).toEqual({ capacity: 10, perMinute: 120, stepIntervalMs: 30_000 })
    for (const k of [0, -1, Number.NaN, Infinity]) expect(() => scaleWorkload(generateWorkload(scenario, 1), k)).toThrow(/scale/)
  })

  it('stretches the oracle by exactly k: the same schedule, slower', () => {
    const rtt = 0
    const oracleAt = (k: number) => {
      const { workload, quota } = scaleRun({ workload: generateWorkload(scenario, 2), quota: PAPER_QUOTA, maxDurationMs: 1 }, k)
      return oracleSchedule({ workload, server: createServerModel('token-bucket-stepped', quota, 0), clientModel: 'paper', rttMs: rtt, originMs: 0 }).completionMs
    }
    expect(oracleAt(10)).toBeCloseTo(oracleAt(1) * 10, 3)
    expect(oracleAt(0.1)).toBeCloseTo(oracleAt(1) * 0.1, 3)
  })
})

describe('a grid over scales', () => {
  const spec = normalizeSpec({
    name: 'scale-test',
    scenarios: [scenario],
    servers: ['token-bucket-continuous'],
    clientModels: ['paper'],
    strategies: ['exponential'],
    feedbacks: ['status-only'],
    seeds: 2,
    firstSeed: 1,
    rttMs: 20,
    quota: PAPER_QUOTA,
    scales: [1, 10],
  })

  it('gives every row its scale, with the oracle stretched by k', async () => {
    const { rows } = await runGrid(spec, { workers: 1 })
    expect(rows.map((r) => r.scale)).toEqual([1, 10])
    const [k1, k10] = rows
    expect(k10!.oracleCompletionMsMean / k1!.oracleCompletionMsMean).toBeGreaterThan(9.9)
    expect(k10!.oracleCompletionMsMean / k1!.oracleCompletionMsMean).toBeLessThan(10.01)
    expect(k10!.incompleteRuns).toBe(0)
  })

  it('flags runs cut off by the scaled time limit as incomplete', async () => {
    // 600 requests through 1 token per minute take 10 h at k = 1, 100 h at k = 10: more
    // than the 6 h × 10 limit, so both seeds are cut off.
    const slow = { ...spec, quota: { capacity: 1, perMinute: 1, stepIntervalMs: 60_000 }, scales: [10] }
    const { rows } = await runGrid(slow, { workers: 1 })
    expect(rows[0]!.incompleteRuns).toBe(2)
  })
})
