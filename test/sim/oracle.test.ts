import { describe, expect, it } from 'vitest'
import { oracleSchedule } from '../../src/sim/oracle.js'
import { DEFAULT_ORIGIN_MS } from '../../src/sim/run-simulation.js'
import { tokenBucket } from '../../src/sim/servers/token-bucket.js'
import type { Workload } from '../../src/sim/workload.js'

const origin = DEFAULT_ORIGIN_MS
// A bucket of 1 token refilled by 1 every second, full at the origin.
const oneEverySecond = () => tokenBucket({ capacity: 1, perMinute: 60, refill: 'stepped', stepIntervalMs: 1000, now: origin })

function workload(...clients: number[][]): Workload {
  return {
    scenario: 'tiny',
    requests: clients.reduce((n, c) => n + c.length, 0),
    clients: clients.map((arrivalsMs, id) => ({ id, startMs: 0, arrivalsMs })),
  }
}

describe('oracle', () => {
  it('serves 3 requests of one client at 0, 1 and 2 s when one token lands per second', () => {
    const result = oracleSchedule({ workload: workload([0, 0, 0]), server: oneEverySecond(), clientModel: 'paper', rttMs: 20 })
    expect(result.admittedAt[0]!.map((t) => t - origin)).toEqual([10, 1000, 2000])
    // First send at 0; the last response is back half an RTT after its admission.
    expect(result.completionMs).toBe(2010)
  })

  it('gives each token to the request that has waited longest', () => {
    const result = oracleSchedule({ workload: workload([0, 0], [500]), server: oneEverySecond(), clientModel: 'paper', rttMs: 0 })
    expect(result.admittedAt.map((a) => a.map((t) => t - origin))).toEqual([[0, 1000], [2000]])
    expect(result.completionMs).toBe(2000)
    expect(result.meanResponseMs).toBeCloseTo((0 + 1000 + 1500) / 3, 9)
  })

  it('keeps a sequential client to one request per round trip, a concurrent one not', () => {
    const roomy = () => tokenBucket({ capacity: 10, perMinute: 60, now: origin })
    const paper = oracleSchedule({ workload: workload([0, 0, 0]), server: roomy(), clientModel: 'paper', rttMs: 100 })
    const concurrent = oracleSchedule({ workload: workload([0, 0, 0]), server: roomy(), clientModel: 'concurrent', rttMs: 100 })
    expect(paper.admittedAt[0]!.map((t) => t - origin)).toEqual([50, 150, 250])
    expect(concurrent.admittedAt[0]!.map((t) => t - origin)).toEqual([50, 50, 50])
  })
})
