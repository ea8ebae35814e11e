import { describe, expect, it } from 'vitest'
import { exponential } from '../../../src/core/pacers/index.js'
import { oracleSchedule } from '../../../src/sim/oracle.js'
import { judgeRoutes } from '../../../src/sim/routes/routes-rows.js'
import { generateRoutesWorkload, ROUTES_SCENARIO, routesServer, type RoutesScenario } from '../../../src/sim/routes/routes-scenario.js'
import { runRoutesGrid } from '../../../src/sim/routes/run-routes-grid.js'
import { runRoutes } from '../../../src/sim/routes/run-routes.js'

// A tenth of the scenario: 3 clients, 90 requests in 6 s, the same limits.
const SMALL: RoutesScenario = { ...ROUTES_SCENARIO, name: 'routes-small', clients: 3, requests: 90, windowMs: 6000 }

describe('the routes scenario', () => {
  it('sends 915 requests from 12 clients, about 30% of them POST /orders', () => {
    const workload = generateRoutesWorkload(ROUTES_SCENARIO, 1)
    expect(workload.clients).toHaveLength(12)
    const routes = workload.clients.flatMap((c) => c.routes!)
    expect(routes).toHaveLength(915)
    const posts = routes.filter((r) => r === 'POST /orders').length
    expect(posts).toBeGreaterThan(230)
    expect(posts).toBeLessThan(320)
    expect(new Set(routes)).toEqual(new Set(['POST /orders', 'GET /catalog']))
  })

  it('reads each route\'s oracle at its last success: the endpoint limit paces POST, the global limit GET', () => {
    const workload = generateRoutesWorkload(ROUTES_SCENARIO, 2)
    const posts = workload.clients.flatMap((c) => c.routes!).filter((r) => r === 'POST /orders').length
    const oracle = oracleSchedule({ workload, server: routesServer(ROUTES_SCENARIO, 1, 0), clientModel: 'concurrent', inFlight: 64, rttMs: 20, originMs: 0 })
    const post = oracle.routeCompletionMs!['POST /orders']!
    const get = oracle.routeCompletionMs!['GET /catalog']!
    // 1/s after a burst of 2: the last POST cannot succeed before (posts − 2) s.
    expect(post).toBeGreaterThanOrEqual((posts - 2) * 1000 - 1000)
    expect(post).toBeLessThan((posts + 2) * 1000)
    // GETs take the rest of the 10/s: done well before the POSTs, after the 60 s window.
    expect(get).toBeGreaterThan(60_000)
    expect(get).toBeLessThan(post)
    expect(oracle.completionMs).toBe(Math.max(post, get))
  })

  it('runs the shipped client against the composite server in virtual time, every request done', async () => {
    const run = await runRoutes({ scenario: SMALL, seed: 1, scale: 1, feedback: 'status-only', strategyName: 'atb' })
    expect(run.incomplete).toBe(false)
    const requests = Object.values(run.routes).reduce((a, r) => a + r.requests, 0)
    expect(requests).toBe(90)
    expect(run.attempts).toBe(requests + run.throttled)
    for (const route of Object.values(run.routes)) {
      expect(route.attempts).toBe(route.requests + route.throttled)
      // Nothing beats perfect knowledge by more than a round trip.
      expect(route.completionMs).toBeGreaterThan(route.oracleCompletionMs - 25)
    }
    // The same seed gives the same run; another strategy a different one.
    expect(await runRoutes({ scenario: SMALL, seed: 1, scale: 1, feedback: 'status-only', strategyName: 'atb' })).toEqual(run)
    const ub = await runRoutes({ scenario: SMALL, seed: 1, scale: 1, feedback: 'status-only', strategyName: 'exponential', strategy: () => exponential() })
    expect(ub.throttled).toBeGreaterThan(run.throttled)
  })

  it('tells where each route\'s 429s fell: the origin\'s lane before or after the split, or a split lane', async () => {
    for (const learnRouteSplits of [true, false]) {
      const run = await runRoutes({ scenario: SMALL, seed: 1, scale: 1, feedback: 'status-only', strategyName: 'atb', learnRouteSplits })
      for (const route of Object.values(run.routes)) {
        const s = route.throttledBySource
        expect(s.originBeforeSplit + s.splitLane + s.originAfterSplit).toBe(route.throttled)
        if (!learnRouteSplits) expect(s.originBeforeSplit).toBe(route.throttled)
      }
      if (learnRouteSplits) expect(run.routes['POST /orders']!.throttledBySource.splitLane).toBeGreaterThan(0)
    }
  })

  it('judges the default against UB at k = 1 and each route\'s oracle, with a splitting-off control', async () => {
    const { rows } = await runRoutesGrid({ scenario: SMALL, scales: [1, 10], seeds: 1, feedbacks: ['status-only'], strategies: ['atb'] })
    expect(rows.map((r) => [r.strategy, r.learnRouteSplits, r.scale])).toEqual([
      ['exponential', true, 1], ['exponential', true, 10], ['atb', true, 1], ['atb', true, 10], ['atb', false, 1], ['atb', false, 10],
    ])
    const verdicts = judgeRoutes(rows)
    const ub = rows[0]!
    expect(verdicts[2]!.allowedThrottled).toBe(Math.max(0.1 * ub.throttledMean, 3))
    expect(verdicts[3]!.allowedThrottled).toBe(verdicts[2]!.allowedThrottled)
    expect(verdicts[0]!.pass).toBeUndefined()
    expect(verdicts[4]!.pass).toBeUndefined()
    for (const v of verdicts.slice(2, 4)) expect(v.pass).toBe(v.misses.length === 0)
  })
})
