// The aggregator's bounds by who reports: per source address and in total, for influence
// (clients, weight, counts, the learned quota), memory (scopes, ids) and double counting.
import { describe, expect, it } from 'vitest'
import { createAggregator } from '../../src/telemetry/aggregator.js'
import type { Aggregator, Reporter } from '../../src/telemetry/aggregator.js'
import type { TelemetryReport } from '../../src/telemetry/protocol.js'

const T0 = 1_700_000_000_000
const QUOTA = 80 / 60
const r = (clientId: string, extra: Partial<TelemetryReport> = {}): TelemetryReport =>
  ({ v: 1, scope: 's', clientId, attempts: 1, throttled: 0, ...extra })
const at = (source: string): Reporter => ({ source })

/** 27 honest clients, each on its own address, with a backlog of 3. */
function honestFleet(agg: Aggregator, now: number): number {
  let share = 0
  for (let i = 0; i < 27; i++) share = agg.report(r(`honest-${i}`, { backlog: 3 }), now, QUOTA, at(`10.0.0.${i}`)).fairSharePerSecond!
  return share
}

describe('aggregator bounds per source', () => {
  it.each([1, 8])('keeps the honest fair share within 2x of 10 000 invented ids from %i address(es)', (addresses) => {
    const agg = createAggregator()
    const before = honestFleet(agg, T0)
    for (let i = 0; i < 10_000; i++) {
      agg.report(r(`fake-${i}`, { backlog: 1_000_000, attempts: 10_000, throttled: 10_000 }), T0 + 1 + (i % 1000), QUOTA, at(`192.0.2.${i % addresses}`))
    }
    const after = honestFleet(agg, T0 + 2_000)
    expect(before / after).toBeLessThanOrEqual(2)
    const read = agg.read('s', T0 + 2_000)
    expect(read.activeClients).toBeLessThanOrEqual(27 + 2 * addresses + 1)
    // 429 reports: at most one per counted client per bucket; attempts: at most 10 000 per counted client per bucket
    expect(read.throttledReports).toBeLessThanOrEqual(2 * addresses + 1)
    expect(read.totalAttempts).toBeLessThanOrEqual(27 * 2 + (2 * addresses + 1) * 10_000 * 2)
  })

  it('lets the clients behind one address share that address\'s part', () => {
    const agg = createAggregator()
    for (let i = 0; i < 3; i++) agg.report(r(`home-${i}`), T0, 1, at(`10.0.1.${i}`))
    let nat
    for (let i = 0; i < 30; i++) nat = agg.report(r(`office-${i}`), T0, 1, at('203.0.113.9'))
    // median source: 1 client of weight 1 → the office counts for 2 of 5
    expect(nat!.activeClients).toBe(5)
    expect(nat!.fairSharePerSecond).toBeCloseTo((1 * 2) / 30 / 5)
    expect(agg.report(r('home-0'), T0, 1, at('10.0.1.0')).fairSharePerSecond).toBeCloseTo(1 / 5)
  })

  it('does not bound a trusted reporter per source', () => {
    const agg = createAggregator()
    agg.report(r('home'), T0, 1, at('10.0.1.1'))
    let fleet
    for (let i = 0; i < 30; i++) fleet = agg.report(r(`worker-${i}`), T0, 1, { source: '203.0.113.9', trusted: true })
    expect(fleet!.activeClients).toBe(31)
  })

  it('learns a quota only when distinct sources agree, from their median', () => {
    const agg = createAggregator()
    const poison = agg.report(r('liar', { quota: { quota: 1e-294, windowMs: 1000 } }), T0, undefined, at('192.0.2.1'))
    expect(poison.quotaPerSecond).toBeUndefined()
    expect(agg.report(r('liar2', { quota: { quota: 1e9, windowMs: 1000 } }), T0, undefined, at('192.0.2.2')).quotaPerSecond).toBeUndefined()
    // A third source makes three: the median of (1e-294, 1e9, 80/min) is the honest hint.
    const honest = agg.report(r('honest', { quota: { quota: 80, windowMs: 60_000 } }), T0, undefined, at('10.0.0.1'))
    expect(honest.quotaPerSecond).toBeCloseTo(QUOTA)
    for (let i = 3; i < 6; i++) agg.report(r(`h${i}`, { quota: { quota: 80, windowMs: 60_000 } }), T0, undefined, at(`10.0.0.${i}`))
    // Many ids from one liar's address still give one hint.
    for (let i = 0; i < 50; i++) agg.report(r(`liar-${i}`, { quota: { quota: 1e9, windowMs: 1000 } }), T0, undefined, at('192.0.2.2'))
    expect(agg.read('s', T0).quotaPerSecond).toBeCloseTo(QUOTA)
    // A configured quota wins; a trusted reporter's hint is taken as given.
    expect(agg.read('s', T0, 5).quotaPerSecond).toBe(5)
    agg.report(r('ops', { quota: { quota: 60, windowMs: 60_000 } }), T0, undefined, { source: '10.9.9.9', trusted: true })
    expect(agg.read('s', T0).quotaPerSecond).toBe(1)
  })

  it('counts each (client, seq) once: a retried report is a duplicate', () => {
    const agg = createAggregator()
    const first = agg.record(r('c', { attempts: 7, throttled: 1, seq: 1 }), T0, QUOTA, at('10.0.0.1'))
    const retry = agg.record(r('c', { attempts: 7, throttled: 1, seq: 1 }), T0 + 300, QUOTA, at('10.0.0.1'))
    expect(first).toMatchObject({ ok: true, duplicate: false })
    expect(retry).toMatchObject({ ok: true, duplicate: true, reply: { totalAttempts: 7, throttledReports: 1 } })
    agg.record(r('c', { attempts: 5, seq: 2 }), T0 + 2_000, QUOTA, at('10.0.0.1'))
    agg.record(r('c', { attempts: 5 }), T0 + 2_100, QUOTA, at('10.0.0.1')) // no seq: always counted
    expect(agg.read('s', T0 + 2_100).totalAttempts).toBe(17)
  })

  it('keeps an id to its own address: a copied id is the copier\'s client, bounded as the copier is', () => {
    const agg = createAggregator()
    for (let i = 0; i < 5; i++) agg.record(r(`honest-${i}`, { seq: 1, quota: { quota: 80, windowMs: 60_000 } }), T0, undefined, at(`10.0.0.${i}`))
    const before = agg.read('s', T0, QUOTA)
    expect(before).toMatchObject({ activeClients: 5, totalAttempts: 5, throttledReports: 0 })
    expect(before.quotaPerSecond).toBeCloseTo(QUOTA)
    // One address names every honest client: the largest seq, counts, backlog and a poisoned quota hint.
    for (let i = 0; i < 5; i++) {
      agg.record(r(`honest-${i}`, { seq: Number.MAX_SAFE_INTEGER, attempts: 10_000, throttled: 10_000, backlog: 1e6, quota: { quota: 1e9, windowMs: 1000 } }), T0 + 1, undefined, at('192.0.2.66'))
    }
    // Before: 50,005 attempts, 5 429 reports, the honest entries' weight 16 and their hints 1e9/s.
    const after = agg.read('s', T0 + 1, QUOTA)
    expect(after).toMatchObject({ activeClients: 7, totalAttempts: 5 + 2 * 10_000, throttledReports: 2 }) // an address counts for 2
    expect(after.fairSharePerSecond).toBeCloseTo(QUOTA / 7)
    expect(agg.read('s', T0 + 1).quotaPerSecond).toBeCloseTo(QUOTA) // five honest hints against one
    // ...and the honest clients' own reports still count (before: every one a duplicate of seq 2^53 - 1).
    for (let i = 0; i < 5; i++) {
      expect(agg.record(r(`honest-${i}`, { seq: 2, throttled: 1 }), T0 + 2_000, undefined, at(`10.0.0.${i}`))).toMatchObject({ ok: true, duplicate: false })
    }
    expect(agg.read('s', T0 + 2_000).throttledReports).toBe(2 + 5)
  })

  it('counts a trusted reporter and an untrusted one behind the same address as two sources', () => {
    // The trusted fleet first: an untrusted address joining it still counts for twice the median address.
    const agg = createAggregator()
    for (let i = 0; i < 5; i++) agg.report(r(`home-${i}`), T0, 1, at(`10.0.0.${i}`))
    for (let i = 0; i < 30; i++) agg.report(r(`worker-${i}`), T0, 1, { source: '203.0.113.9', trusted: true })
    for (let i = 0; i < 64; i++) agg.report(r(`fake-${i}`, { attempts: 10_000, throttled: 10_000, backlog: 1e6 }), T0, 1, at('203.0.113.9'))
    // Before: 70 clients, 35 429 reports (the fake ids counted in the trusted source).
    expect(agg.read('s', T0, 1)).toMatchObject({ activeClients: 37, throttledReports: 2 })
    expect(agg.report(r('home-0'), T0, 1, at('10.0.0.0')).fairSharePerSecond).toBeCloseTo(1 / 37)
    // An untrusted reporter first: the trusted fleet behind the same address is still not bounded (before: 7).
    const other = createAggregator()
    for (let i = 0; i < 5; i++) other.report(r(`home-${i}`), T0, 1, at(`10.0.0.${i}`))
    other.report(r('office-browser'), T0, 1, at('203.0.113.9'))
    for (let i = 0; i < 30; i++) other.report(r(`worker-${i}`), T0, 1, { source: '203.0.113.9', trusted: true })
    expect(other.read('s', T0, 1).activeClients).toBe(36)
  })

  it('caps the scopes one address may touch, without touching other addresses\' scopes', () => {
    const agg = createAggregator({ maxScopesPerSource: 5 })
    agg.report(r('honest', { scope: 'theirs', attempts: 3 }), T0, undefined, at('10.0.0.1'))
    const results = Array.from({ length: 20 }, (_, i) => agg.record(r('x', { scope: `flood-${i}` }), T0 + i, undefined, at('192.0.2.1')))
    expect(results.filter((result) => result.ok)).toHaveLength(5)
    expect(results[19]).toMatchObject({ ok: false, reason: 'scope-limit' })
    expect(agg.record(r('honest', { scope: 'new' }), T0 + 30, undefined, at('10.0.0.1')).ok).toBe(true)
    expect(agg.read('theirs', T0 + 30).totalAttempts).toBe(3)
  })

  it('tracks at most maxClientsPerSource ids per address and scope, and maxClients in all', () => {
    const agg = createAggregator({ maxClientsPerSource: 4, maxClients: 10 })
    for (let i = 0; i < 100; i++) agg.report(r(`a-${i}`), T0, undefined, at('192.0.2.1'))
    expect(agg.clientCount()).toBe(4)
    for (let s = 2; s < 6; s++) for (let i = 0; i < 4; i++) agg.report(r(`b-${s}-${i}`), T0, undefined, at(`192.0.2.${s}`))
    expect(agg.clientCount()).toBe(10)
  })
})

describe('aggregator records of the scopes each address reported on', () => {
  it('forgets the addresses that reported least recently beyond maxScopeClaims, refusing nobody for it', () => {
    const agg = createAggregator({ maxScopesPerSource: 3, maxScopeClaims: 10 })
    const claim = (source: string, scope: string, now: number) => agg.record(r('c', { scope }), now, undefined, at(source))
    for (let i = 0; i < 3; i++) expect(claim('192.0.2.1', `a${i}`, T0).ok).toBe(true)
    expect(claim('192.0.2.1', 'a3', T0 + 1)).toMatchObject({ ok: false, reason: 'scope-limit' })
    // Four other addresses, two scopes each: 11 records, so the least recent address is forgotten...
    for (let a = 2; a < 6; a++) for (let i = 0; i < 2; i++) expect(claim(`192.0.2.${a}`, `b${a}-${i}`, T0 + 2).ok).toBe(true)
    expect(agg.scopeClaimCount()).toBe(8)
    // ...and starts its count again; the others keep theirs.
    expect(claim('192.0.2.1', 'a3', T0 + 3).ok).toBe(true)
    expect(claim('192.0.2.5', 'b5-2', T0 + 3).ok).toBe(true)
    expect(claim('192.0.2.5', 'b5-3', T0 + 3)).toMatchObject({ ok: false, reason: 'scope-limit' })
    expect(agg.scopeClaimCount()).toBeLessThanOrEqual(10)
  })

  it('holds at most maxScopeClaims records under a flood of addresses, and none for trusted reporters', () => {
    const agg = createAggregator({ maxScopeClaims: 1_000 })
    for (let a = 0; a < 2_000; a++) {
      for (let i = 0; i < 4; i++) expect(agg.record(r('c', { scope: `s${(a + i) % 50}` }), T0 + a, undefined, at(`2001:db8:0:${a.toString(16)}::/64`)).ok).toBe(true)
      expect(agg.scopeClaimCount()).toBeLessThanOrEqual(1_000)
    }
    agg.record(r('ops', { scope: 's0' }), T0 + 2_000, undefined, { source: '10.9.9.9', trusted: true })
    expect(agg.scopeClaimCount()).toBe(1_000)
    // They expire as before: 70 s after their address's last report.
    agg.prune(T0 + 2_000 + 70_000)
    expect(agg.scopeClaimCount()).toBe(0)
  })
})
