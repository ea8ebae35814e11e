import { describe, expect, it } from 'vitest'
import { exponential } from '../../src/core/pacers/exponential.js'
import { DEFAULT_ORIGIN_MS, runSimulation, type AttemptTrace, type SimulationOptions } from '../../src/sim/run-simulation.js'
import { scenarioByName } from '../../src/sim/scenarios.js'
import { tokenBucket } from '../../src/sim/servers/token-bucket.js'
import { generateWorkload, type Workload } from '../../src/sim/workload.js'
import { recordingStrategy, standInSignals, type PacerLog } from './helpers/stand-ins.js'

const origin = DEFAULT_ORIGIN_MS

function tiny(...clients: number[][]): Workload {
  return {
    scenario: 'tiny',
    requests: clients.reduce((n, c) => n + c.length, 0),
    clients: clients.map((arrivalsMs, id) => ({ id, startMs: 0, arrivalsMs })),
  }
}

function run(overrides: Partial<SimulationOptions> & Pick<SimulationOptions, 'workload'>) {
  const log: PacerLog = { sends: [], results: [] }
  const traces: AttemptTrace[] = []
  const metrics = runSimulation({
    server: tokenBucket({ capacity: 5, perMinute: 60, now: origin }),
    feedback: 'status-only',
    strategy: recordingStrategy(log),
    clientModel: 'paper',
    signalPath: standInSignals,
    seed: 1,
    trace: (t) => traces.push(t),
    ...overrides,
  })
  return { metrics, log, traces }
}

describe('runSimulation', () => {
  it('sends at arrival when nothing is wrong and takes one RTT per attempt', () => {
    const { metrics, traces } = run({ workload: tiny([0, 100, 200]) })
    expect(traces.map((t) => [t.sentAt - origin, t.respondedAt - origin, t.status])).toEqual([
      [0, 20, 200], [100, 120, 200], [200, 220, 200],
    ])
    expect(metrics).toMatchObject({ requests: 3, completed: 3, attempts: 3, throttled: 0, completionMs: 220, incomplete: false })
    expect(metrics.meanResponseMs).toBe(20)
  })

  it('paper model: one request in flight, FIFO, the next only after the previous succeeded', () => {
    // 10 tokens for 3 clients × 8 simultaneous requests: most first tries are refused.
    const { metrics, traces } = run({
      workload: tiny([0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]),
      server: tokenBucket({ capacity: 10, perMinute: 60, now: origin }),
      strategy: recordingStrategy({ sends: [], results: [] }, { retryDelayMs: 700 }),
    })
    expect(metrics.completed).toBe(24)
    expect(metrics.throttled).toBeGreaterThan(0)
    expect(metrics.attempts).toBe(24 + metrics.throttled)
    for (const client of [0, 1, 2]) {
      const mine = traces.filter((t) => t.client === client).sort((a, b) => a.sentAt - b.sentAt)
      for (let k = 1; k < mine.length; k++) {
        const previous = mine[k - 1]!
        const current = mine[k]!
        expect(current.sentAt).toBeGreaterThanOrEqual(previous.respondedAt)
        // Same request again after a refusal; the next request only after a success.
        expect(current.request).toBe(previous.status === 200 ? previous.request + 1 : previous.request)
      }
    }
  })

  it('concurrent model: up to 8 attempts in flight per client, never more', () => {
    const { traces } = run({
      workload: tiny(new Array<number>(20).fill(0)),
      server: tokenBucket({ capacity: 100, perMinute: 60, now: origin }),
      clientModel: 'concurrent',
    })
    let peak = 0
    for (const t of traces) {
      const overlapping = traces.filter((u) => u.sentAt <= t.sentAt && u.respondedAt > t.sentAt).length
      peak = Math.max(peak, overlapping)
    }
    expect(peak).toBe(8)
  })

  it('concurrent model: a waiting retry holds the head of the lane', () => {
    const { traces } = run({
      workload: tiny([0, 0, 0, 5000]),
      server: tokenBucket({ capacity: 1, perMinute: 60, now: origin }),
      clientModel: 'concurrent',
      strategy: recordingStrategy({ sends: [], results: [] }, { retryDelayMs: 10_000 }),
    })
    // Requests 1 and 2 are refused at once and wait 10 s; request 3 arrives at 5 s but
    // must not be sent before they go again.
    const firstOf3 = traces.find((t) => t.request === 3)!
    const retryOf2 = traces.find((t) => t.request === 2 && t.attempt === 2)!
    expect(firstOf3.sentAt).toBeGreaterThanOrEqual(retryOf2.sentAt)
    expect(firstOf3.sentAt - origin).toBeGreaterThanOrEqual(10_000)
  })

  it("waits as long as the pacer says before every attempt", () => {
    const log: PacerLog = { sends: [], results: [] }
    run({ workload: tiny([0, 0, 0, 0]), strategy: recordingStrategy(log, { spacingMs: 1000 }) })
    expect(log.sends.map((s) => s.at - origin)).toEqual([0, 1000, 2000, 3000])
  })

  it('never retries before the server-given retryAt, whatever the strategy wants', () => {
    const { traces } = run({
      workload: tiny([0, 0, 0], [0, 0, 0]),
      server: tokenBucket({ capacity: 1, perMinute: 6, now: origin }),
      feedback: 'retry-after',
    })
    const refused = traces.filter((t) => t.status === 429)
    expect(refused.length).toBeGreaterThan(0)
    for (const r of refused) {
      expect(r.signal.retryAt).toBeDefined()
      const next = traces.find((t) => t.client === r.client && t.request === r.request && t.attempt === r.attempt + 1)!
      expect(next.sentAt).toBeGreaterThanOrEqual(r.signal.retryAt!)
    }
  })

  it('gives the same result for the same seed and differs for another', () => {
    const scenario = scenarioByName('real-trace-500')!
    const once = (seed: number) =>
      runSimulation({
        workload: generateWorkload(scenario, seed),
        server: tokenBucket({ capacity: 100, perMinute: 80, refill: 'stepped', now: origin }),
        feedback: 'status-only',
        strategy: { strategy: exponential() },
        clientModel: 'paper',
        signalPath: standInSignals,
        seed,
      })
    const a = once(4)
    expect(once(4)).toEqual(a)
    expect(once(5)).not.toEqual(a)
    expect(a.completed).toBe(500)
    expect(a.throttled).toBeGreaterThan(50)
  })

  it('records admitted and rejected attempts per second when asked', () => {
    const { metrics } = run({
      workload: tiny([0, 0, 0, 0, 0, 0]),
      server: tokenBucket({ capacity: 2, perMinute: 60, now: origin }),
      strategy: recordingStrategy({ sends: [], results: [] }, { retryDelayMs: 300 }),
      timeline: true,
    })
    const admitted = metrics.timeline!.admitted.reduce((a, b) => a + b, 0)
    const rejected = metrics.timeline!.rejected.reduce((a, b) => a + b, 0)
    expect(admitted).toBe(6)
    expect(rejected).toBe(metrics.throttled)
    expect(metrics.timeline!.admitted[0]).toBe(2)
  })

  it('flags a run that cannot finish within its time limit', () => {
    const { metrics } = run({
      workload: tiny([0, 0, 0]),
      server: tokenBucket({ capacity: 1, perMinute: 1, now: origin }),
      strategy: recordingStrategy({ sends: [], results: [] }, { retryDelayMs: 1000 }),
      maxDurationMs: 30_000,
    })
    expect(metrics.incomplete).toBe(true)
    expect(metrics.completed).toBe(1)
  })
})

describe('runSimulation telemetry (AATB)', () => {
  it('reports when the pacer says it is due, one report in flight, and hands back the aggregate', () => {
    const reports: Array<{ at: number; client: string; backlog: number | undefined; throttled: number }> = []
    const aggregates: Array<{ at: number; active: number }> = []
    let created = 0
    const strategy = {
      name: 'reporting',
      create() {
        const id = created++
        let attempts = 0
        let throttledSince = 0
        let nextRoutine = origin + 30_000
        return {
          delayMs: () => 0,
          onSend: () => { attempts++ },
          onResult: (_now: number, signal: { kind: string }) => { if (signal.kind === 'throttled') throttledSince++ },
          retryDelayMs: () => 5000,
          toJSON: (now: number) => ({ kind: 'reporting', version: 1, savedAt: now }),
          ratePerSecond: Infinity,
          tokens: () => Infinity,
          reportDueAt: (now: number) => (throttledSince > 0 ? now : nextRoutine),
          takeReport: (now: number) => {
            while (nextRoutine <= now) nextRoutine += 30_000
            const report = { attempts, throttled: throttledSince }
            attempts = 0
            throttledSince = 0
            return report
          },
          onAggregate: (now: number, aggregate: { activeClients: number }) => { aggregates.push({ at: now - origin, active: aggregate.activeClients }) },
          id,
        }
      },
    }
    const metrics = runSimulation({
      workload: tiny([0, 0, 0, 40_000], [0, 0]),
      server: tokenBucket({ capacity: 3, perMinute: 60, now: origin }),
      feedback: 'status-only',
      strategy: {
        strategy,
        telemetry: {
          aggregator: {
            report(report, now) {
              reports.push({ at: now - origin, client: report.clientId, backlog: report.backlog, throttled: report.throttled })
              return { v: 1, scope: report.scope, activeClients: 2, totalAttempts: 0, throttledReports: 0, windowMs: 30_000 }
            },
          },
        },
      },
      clientModel: 'paper',
      signalPath: standInSignals,
      seed: 1,
    })
    expect(metrics.completed).toBe(6)
    // Client 1's second request is refused at 0.04 s: it reports at once, with its backlog.
    expect(reports[0]).toEqual({ at: 40, client: 'c1', backlog: 1, throttled: 1 })
    // Routine reports every 30 s while a client has work left; none after it finished.
    expect(reports.filter((r) => r.client === 'c0' && r.throttled === 0).map((r) => r.at)).toEqual([30_000])
    expect(reports.every((r) => r.at <= 40_020)).toBe(true)
    // Each reply arrives one RTT later and reaches the pacer.
    expect(aggregates[0]).toEqual({ at: 60, active: 2 })
    expect(aggregates).toHaveLength(reports.length)
    expect(metrics.telemetryMessages).toBe(reports.length)
  })
})
