import { describe, expect, it } from 'vitest'
import { normalizeSpec, PAPER_QUOTA, type GridSpec } from '../../src/sim/grid-spec.js'
import { stringifyGrid } from '../../src/sim/grid-json.js'
import { runGrid } from '../../src/sim/run-grid.js'
import { scenarioByName } from '../../src/sim/scenarios.js'

const spec: GridSpec = normalizeSpec({
  name: 'test',
  scenarios: [scenarioByName('synthetic-5c-600')!, scenarioByName('real-trace-400')!],
  servers: ['token-bucket-continuous', 'token-bucket-stepped'],
  clientModels: ['paper'],
  strategies: ['atb', 'atb-paper'],
  feedbacks: ['status-only', 'retry-after'],
  seeds: 2,
  firstSeed: 1,
  rttMs: 20,
  quota: PAPER_QUOTA,
})

describe('runGrid', () => {
  it('runs every cell, always with UB as the reference, in the paper\'s terms', async () => {
    const { rows, workers } = await runGrid(spec, { workers: 1 })
    expect(workers).toBe(1)
    expect(spec.strategies[0]).toBe('exponential')
    expect(rows).toHaveLength(2 * 2 * 3 * 2)
    for (const row of rows) {
      expect(row.seeds).toBe(2)
      expect(row.attempts).toBeCloseTo(row.requests + row.throttled, 6)
      expect(row.throttled).toBe(row.throttledMean)
      expect(row.oracleRatio).toBeGreaterThan(0.95)
      expect(row.completionMsMean).toBeGreaterThan(250_000)
      expect(row.incompleteRuns).toBe(0)
      expect(row.server).toMatch(/^token-bucket-(continuous|stepped)$/)
      if (row.strategy === 'exponential') {
        expect(row.completionVsUbPct).toBe(0)
        if (row.ubThrottledMean > 0) expect(row.throttledVsUbPct).toBe(0)
      }
    }
    // Stepped refill is where exponential backoff hammers: hundreds of 429s over 600 requests.
    const ubStepped = rows.find((r) => r.strategy === 'exponential' && r.server === 'token-bucket-stepped' && r.scenario === 'synthetic-5c-600' && r.feedback === 'status-only')!
    expect(ubStepped.throttledMean).toBeGreaterThan(100)
  })

  it('writes byte-identical JSON for the same seeds, in-process or on worker threads', async () => {
    const small = { ...spec, scenarios: [scenarioByName('synthetic-5c-300')!], servers: [spec.servers[1]!], feedbacks: ['status-only' as const] }
    const inProcess = stringifyGrid(small, (await runGrid(small, { workers: 1 })).rows)
    const again = stringifyGrid(small, (await runGrid(small, { workers: 1 })).rows)
    const threaded = await runGrid(small, { workers: 2 })
    expect(threaded.workers).toBe(2)
    expect(again).toBe(inProcess)
    expect(stringifyGrid(small, threaded.rows)).toBe(inProcess)
    const otherSeeds = stringifyGrid(small, (await runGrid({ ...small, firstSeed: 7 }, { workers: 1 })).rows)
    expect(otherSeeds).not.toBe(inProcess)
  })

  it('reports progress once per task', async () => {
    const small = { ...spec, scenarios: [spec.scenarios[0]!], strategies: ['exponential'], feedbacks: ['status-only' as const] }
    const seen: Array<[number, number]> = []
    await runGrid(small, { workers: 1, onProgress: (done, total) => seen.push([done, total]) })
    expect(seen).toEqual([[1, 4], [2, 4], [3, 4], [4, 4]])
  })
})
