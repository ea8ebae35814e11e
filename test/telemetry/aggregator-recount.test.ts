// The aggregator keeps its per-source bounds in ordered sets that change with each report
// instead of sorting every source's counts again. Here random fleets report, read, expire and
// leave, and after every step each scope's state is held to a recount of its sources from
// scratch (the sort the aggregator used to do on each new source address).
import { describe, expect, it } from 'vitest'
import { createAggregator, inspectScope } from '../../src/telemetry/aggregator.js'
import type { AggregatorOptions, Reporter, ScopeBounds, ScopeInspection } from '../../src/telemetry/aggregator.js'
import { stream } from '../../src/sim/random.js'
import { median } from '../../src/telemetry/median.js'
import type { TelemetryReport } from '../../src/telemetry/protocol.js'

const T0 = 1_700_000_000_000

/** What the aggregator's recount computed over a scope's sources (sorts, then sums under the caps). */
function recount(sources: ScopeInspection['sources'], multiple: number, minQuotaSources: number, caps?: { capClients: number; capWeight: number }): ScopeBounds {
  const capClients = caps?.capClients ?? Math.ceil(multiple * (median(sources.map((s) => s.clients)) ?? 1))
  const capWeight = caps?.capWeight ?? Math.ceil(multiple * (median(sources.map((s) => s.weight)) ?? 1))
  let countedClients = 0
  let countedWeight = 0
  for (const s of sources) {
    countedClients += s.trusted ? s.clients : Math.min(s.clients, capClients)
    countedWeight += s.trusted ? s.weight : Math.min(s.weight, capWeight)
  }
  const hints = sources.flatMap((s) => (s.quota === undefined ? [] : [s.quota]))
  return { capClients, capWeight, countedClients, countedWeight, medianQuotaPerSecond: hints.length >= minQuotaSources ? median(hints) : undefined }
}

const OPTIONS: AggregatorOptions[] = [
  {},
  { maxClientsPerSource: 3, maxClientsPerScope: 40, maxClients: 70, maxScopesPerSource: 2, maxScopes: 3, minQuotaSources: 1 },
  { maxClientsPerSource: 6, maxClientsPerScope: 25, sourceMedianMultiple: 1.5, minQuotaSources: 2, maxBacklogWeight: 40 },
]

describe('aggregator bounds against a recount', () => {
  it.each([1, 2, 3, 4, 5, 6])('match a recount of every scope\'s sources after every step, seed %i', (seed) => {
    const random = stream(seed, 'aggregator-recount')
    const options = OPTIONS[seed % OPTIONS.length]!
    const agg = createAggregator(options)
    const o = agg.options
    const scopes = ['a', 'b', 'c', 'd']
    let now = T0
    let sourcesSeen = 0
    let departures = 0
    const sourcesBefore = new Map<string, number>()
    for (let step = 0; step < 2_000; step++) {
      // Mostly reports close together; now and then a new active bucket (a sweep), rarely past every window.
      const jump = random()
      now += jump < 0.9 ? Math.floor(random() * 400) : jump < 0.99 ? 5_000 + Math.floor(random() * 20_000) : 80_000
      const scope = scopes[Math.floor(random() * scopes.length)]!
      const op = random()
      if (op < 0.85) {
        const address = Math.floor(random() * 40)
        const from: Reporter = { source: `192.0.2.${address}`, trusted: random() < 0.08 }
        const report: TelemetryReport = {
          v: 1, scope, clientId: `id${Math.floor(random() * 8)}`, attempts: Math.floor(random() * 12_000), throttled: 0,
          backlog: Math.floor(random() * 50),
        }
        if (random() < 0.3) report.throttled = Math.min(report.attempts, 2)
        if (random() < 0.3) report.seq = Math.floor(random() * 5)
        if (random() < 0.35) report.quota = { quota: [60, 80, 90, 1e9, 7, 1e-400][Math.floor(random() * 6)]!, windowMs: 60_000 }
        agg.record(report, now, random() < 0.2 ? 2 : undefined, random() < 0.05 ? undefined : from)
      } else if (op < 0.95) {
        agg.read(scope, now) // in a new active bucket, a sweep: expired clients leave and the bounds are found again
      } else if (op < 0.98) {
        agg.snapshot(now, 10)
      } else {
        agg.prune(now)
      }
      for (const name of scopes) {
        const seen = inspectScope(agg, name)
        if (!seen) continue
        sourcesSeen = Math.max(sourcesSeen, seen.sources.length)
        if (seen.sources.length < (sourcesBefore.get(name) ?? 0)) departures++
        sourcesBefore.set(name, seen.sources.length)
        // The ordered sets give exactly what a sort of the sources gives.
        expect(seen.fromSets, `step ${step} scope ${name}`).toEqual(recount(seen.sources, o.sourceMedianMultiple, o.minQuotaSources))
        // The counted sums kept report by report are the sums under the kept caps.
        const underKept = recount(seen.sources, o.sourceMedianMultiple, o.minQuotaSources, seen.kept)
        expect(seen.kept.countedClients, `step ${step} scope ${name}`).toBe(underKept.countedClients)
        expect(seen.kept.countedWeight, `step ${step} scope ${name}`).toBe(underKept.countedWeight)
        // Clients and hints move the bounds at once (weights only at the next sweep, by design).
        expect(seen.kept.capClients).toBe(seen.fromSets.capClients)
        expect(seen.kept.medianQuotaPerSecond).toBe(seen.fromSets.medianQuotaPerSecond)
      }
    }
    // the run had fleets worth the name, and sources left them (not only whole scopes going idle)
    expect(sourcesSeen).toBeGreaterThan(10)
    expect(departures).toBeGreaterThan(5)
  })

  it('finds every bound again at a sweep, weights included', () => {
    const agg = createAggregator()
    for (let i = 0; i < 9; i++) agg.record({ v: 1, scope: 's', clientId: 'c', attempts: 1, throttled: 0, backlog: 1 }, T0, 1, { source: `10.0.0.${i}` })
    // Backlogs grow without a new source: the weight cap stays where it was...
    for (let i = 0; i < 9; i++) agg.record({ v: 1, scope: 's', clientId: 'c', attempts: 1, throttled: 0, backlog: 12 }, T0 + 1, 1, { source: `10.0.0.${i}` })
    const before = inspectScope(agg, 's')!
    expect(before.kept.capWeight).toBe(2)
    expect(before.fromSets.capWeight).toBe(24)
    // ...until the next active bucket's sweep.
    agg.read('s', T0 + 10_000)
    const after = inspectScope(agg, 's')!
    expect(after.kept).toEqual(after.fromSets)
    expect(after.kept).toEqual(recount(after.sources, 2, 3))
  })
})
