import { describe, expect, it } from 'vitest'
import { createAggregator, PAPER_AGGREGATOR_OPTIONS } from '../../src/telemetry/aggregator.js'
import { validateReply } from '../../src/telemetry/protocol.js'
import type { TelemetryReport } from '../../src/telemetry/protocol.js'

const T0 = 1_700_000_000_000 // a multiple of 10 000: bucket boundaries are easy to reason about
const r = (clientId: string, attempts: number, throttled = 0, extra: Partial<TelemetryReport> = {}): TelemetryReport =>
  ({ v: 1, scope: 's', clientId, attempts, throttled, ...extra })

describe('createAggregator', () => {
  it('sums attempts and 429 reports over the 30 s window, dropping 2 s buckets as they age out', () => {
    const agg = createAggregator()
    agg.report(r('a', 10, 1), T0)
    agg.report(r('b', 5), T0 + 3_000)
    expect(agg.read('s', T0 + 3_000)).toMatchObject({ totalAttempts: 15, throttledReports: 1, activeClients: 2, windowMs: 30_000 })
    // T0's bucket [T0, T0+2s) leaves the window once the newest bucket starts at T0+30 s.
    expect(agg.read('s', T0 + 29_999).totalAttempts).toBe(15)
    expect(agg.read('s', T0 + 30_000)).toMatchObject({ totalAttempts: 5, throttledReports: 0 })
    expect(agg.read('s', T0 + 34_000).totalAttempts).toBe(0)
  })

  it('counts clients as active over 60 s in 10 s buckets', () => {
    const agg = createAggregator()
    agg.report(r('a', 1), T0 + 9_000)
    agg.report(r('b', 1), T0 + 15_000)
    expect(agg.read('s', T0 + 59_999).activeClients).toBe(2)
    expect(agg.read('s', T0 + 60_000).activeClients).toBe(1) // a's bucket [T0, T0+10s) expired
    expect(agg.read('s', T0 + 70_000).activeClients).toBe(1) // none left: at least 1, like the paper
  })

  it('the paper preset leaves the current 2 s bucket out', () => {
    const paper = createAggregator(PAPER_AGGREGATOR_OPTIONS)
    const reply = paper.report(r('a', 10, 1), T0 + 500)
    expect(reply).toMatchObject({ totalAttempts: 0, throttledReports: 0 })
    expect(paper.read('s', T0 + 2_000)).toMatchObject({ totalAttempts: 10, throttledReports: 1 })
    expect(paper.read('s', T0 + 32_000).totalAttempts).toBe(0)
  })

  it('counts a client once per bucket: presence, and its 429 reports', () => {
    const agg = createAggregator()
    for (let i = 0; i < 50; i++) agg.report(r('a', 1, 1), T0 + i * 10)
    expect(agg.read('s', T0 + 600)).toMatchObject({ activeClients: 1, throttledReports: 1, totalAttempts: 50 })
    agg.report(r('a', 1, 1), T0 + 2_000)
    expect(agg.read('s', T0 + 2_000).throttledReports).toBe(2)
  })

  it('clamps one client\'s attempts per bucket, however many reports it sends', () => {
    const agg = createAggregator({ maxAttemptsPerClientPerBucket: 100 })
    for (let i = 0; i < 20; i++) agg.report(r('hostile', 1_000_000), T0 + i)
    agg.report(r('honest', 7), T0)
    expect(agg.read('s', T0 + 100).totalAttempts).toBe(107)
  })

  it('bounds spoofed client ids by sharing one overflow entry', () => {
    const agg = createAggregator({ maxClientsPerScope: 10, maxAttemptsPerClientPerBucket: 100 })
    for (let i = 0; i < 1000; i++) agg.report(r(`spoof-${i}`, 1000), T0 + i)
    const reply = agg.read('s', T0 + 1_000)
    expect(reply.activeClients).toBe(11) // 10 tracked + the overflow entry
    expect(reply.totalAttempts).toBeLessThanOrEqual(11 * 100)
  })

  it('divides the configured quota among active clients weighted by backlog, with bounded weights', () => {
    const agg = createAggregator({ maxBacklogWeight: 4 })
    agg.report(r('idle', 1, 0, { backlog: 0 }), T0)
    agg.report(r('busy', 1, 0, { backlog: 3 }), T0)
    const hostile = agg.report(r('liar', 1, 0, { backlog: 1_000_000 }), T0, 2)
    // weights 1 + 3 + 4 (clamped) = 8; the liar gets 4/8 of 2/s, the others are not starved
    expect(hostile.fairSharePerSecond).toBeCloseTo(1)
    expect(hostile.quotaPerSecond).toBe(2)
    expect(agg.read('s', T0, 2).fairSharePerSecond).toBeCloseTo(2 / 8)
    // the busy client updates its backlog: weights are replaced, not summed
    const busy = agg.report(r('busy', 1, 0, { backlog: 1 }), T0 + 1, 2)
    expect(busy.fairSharePerSecond).toBeCloseTo(2 / 6)
  })

  it('learns the quota from RateLimit-Policy hints when none is configured', () => {
    const agg = createAggregator()
    expect(agg.report(r('a', 1), T0).quotaPerSecond).toBeUndefined()
    agg.report(r('b', 1, 0, { quota: { quota: 120, windowMs: 60_000 } }), T0)
    expect(agg.read('s', T0)).toMatchObject({ quotaPerSecond: 2, fairSharePerSecond: 1 })
    expect(agg.read('s', T0, 10).quotaPerSecond).toBe(10) // configuration wins
  })

  it('ignores a quota hint whose rate no reply could carry, keeping the rate it had', () => {
    const agg = createAggregator()
    agg.report(r('a', 1, 0, { quota: { quota: 120, windowMs: 60_000 } }), T0)
    // Each field is in range, but 1e9 per 5e-324 ms is an infinite rate, 1e9 per 0.5 ms is 2e12/s.
    for (const windowMs of [5e-324, 0.5]) {
      const reply = agg.report(r('b', 1, 0, { quota: { quota: 1e9, windowMs } }), T0)
      expect(validateReply(reply)).toMatchObject({ ok: true })
      expect(reply.quotaPerSecond).toBe(2)
    }
    expect(agg.read('s', T0)).toMatchObject({ quotaPerSecond: 2 })
  })

  it('omits a learned rate whose fair share underflows to 0', () => {
    const agg = createAggregator()
    agg.report(r('big', 1, 0, { backlog: 16, quota: { quota: 5e-324, windowMs: 1000 } }), T0)
    const reply = agg.read('s', T0)
    expect(validateReply(reply)).toMatchObject({ ok: true })
    expect(reply.fairSharePerSecond).toBeUndefined()
  })

  it('drops idle scopes, and refuses a new scope beyond the cap instead of evicting a live one', () => {
    const agg = createAggregator({ maxScopes: 3 })
    for (const scope of ['a', 'b', 'c']) agg.report({ ...r('x', 1), scope }, T0)
    expect(agg.record({ ...r('x', 1), scope: 'd' }, T0 + 1_000)).toEqual({ ok: false, reason: 'scope-limit', retryAfterMs: 69_000 })
    expect(agg.scopeCount()).toBe(3)
    expect(agg.read('a', T0 + 1_000).totalAttempts).toBe(1) // still there
    agg.prune(T0 + 70_000)
    expect(agg.scopeCount()).toBe(0)
    expect(agg.record({ ...r('x', 1), scope: 'd' }, T0 + 70_000).ok).toBe(true)
  })

  it('keeps scopes apart', () => {
    const agg = createAggregator()
    agg.report({ ...r('x', 5), scope: 'one' }, T0)
    agg.report({ ...r('y', 7, 1), scope: 'two' }, T0)
    expect(agg.read('one', T0)).toMatchObject({ totalAttempts: 5, throttledReports: 0, activeClients: 1 })
    expect(agg.read('two', T0)).toMatchObject({ totalAttempts: 7, throttledReports: 1 })
  })

  it('handles 100 000 reports quickly', () => {
    const agg = createAggregator()
    const started = performance.now()
    for (let i = 0; i < 100_000; i++) agg.report(r(`c${i % 500}`, 1, i % 7 === 0 ? 1 : 0), T0 + i)
    expect(agg.read('s', T0 + 100_000).activeClients).toBe(500)
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})
