// Spending a lump the server named (atb-lump.ts): on a bucket refilled in steps that answers
// 429s with Retry-After only, the default ATB waits for the step the server names and then
// spends it as its answers come; a 429 that ends the lump is not congestion; attempts refused at
// named times (a sliding window's trickle) make the lane pace again. Manual clock, no sleeping.
import { describe, expect, it } from 'vitest'
import { LumpSpending } from '../../../src/core/pacers/atb-lump.js'
import { aatb } from '../../../src/core/pacers/aatb.js'
import { atb } from '../../../src/core/pacers/atb.js'
import type { Aggregate, Pacer, Signal, Strategy } from '../../../src/core/types.js'
import { windowForQuota } from '../../../src/telemetry/aggregator-windows.js'
import { tokenBucket } from '../../../src/sim/servers/token-bucket.js'

const T0 = 1_700_000_000_000
const RTT_MS = 20
const ok: Signal = { kind: 'ok', status: 200 }
const throttled = (retryAt: number): Signal => ({ kind: 'throttled', status: 429, retryAt })

/**
 * `lanes` lanes, each with a backlog and one attempt out at a time, sharing a stepped bucket (100
 * units, 80 every 60 s × k) that answers 429s with Retry-After only, in whole seconds: the units
 * admitted and the 429s per step, over all lanes.
 */
function steppedRun(k: number, steps: number, lanes: number, strategy: Strategy = atb(), fleet?: (laneIndex: number) => Aggregate): { admitted: number[]; throttled: number[] } {
  const stepMs = 60_000 * k
  const server = tokenBucket({ capacity: 100, perMinute: 80 / k, refill: 'stepped', stepIntervalMs: stepMs, now: T0 })
  const pacers = Array.from({ length: lanes }, (_, i) => strategy.create({ now: T0, random: () => (i + 0.5) / lanes }))
  // The fleet's view, as an aggregator would answer each lane's report (one at the start, one per step).
  const told = new Array<number>(lanes).fill(-1)
  const readyAt = pacers.map((_, i) => T0 + i)
  const admitted = new Array<number>(steps).fill(0)
  const refused = new Array<number>(steps).fill(0)
  for (;;) {
    const lane = readyAt.indexOf(Math.min(...readyAt))
    const pacer = pacers[lane]!
    let now = readyAt[lane]!
    if (now >= T0 + steps * stepMs) break
    const period = Math.floor((now - T0) / stepMs)
    if (fleet !== undefined && told[lane] !== period) {
      told[lane] = period
      pacer.onAggregate!(now, fleet(lane))
    }
    const wait = pacer.delayMs(now, 1)
    if (wait > 0) {
      readyAt[lane] = now + wait
      continue
    }
    pacer.onSend(now, 1)
    const a = server.admit(now, 1)
    const step = Math.floor((now - T0) / stepMs)
    now += RTT_MS
    if (a.admitted) admitted[step]!++
    else refused[step]!++
    pacer.onResult(now, a.admitted ? ok : throttled(now + Math.ceil((a.retryAfterMs ?? 1000) / 1000) * 1000))
    readyAt[lane] = now
  }
  return { admitted, throttled: refused }
}

/** A fresh lane of `strategy` admitted ten times, `spacingMs` apart: the pacer and the time after. */
function admittedLane(strategy: Strategy = atb(), spacingMs = 1000): { pacer: Pacer; now: number } {
  const pacer = strategy.create({ now: T0, random: () => 0.5 })
  let now = T0
  for (let i = 0; i < 10; i++) now = attempt(pacer, now, () => ok) + spacingMs
  return { pacer, now }
}

/** A congested fleet's aggregate: `clients` sharing `quotaPerSecond` equally. */
function fleet(clients: number, quotaPerSecond: number): Aggregate {
  return {
    activeClients: clients,
    totalAttempts: 2 * clients,
    throttledReports: 5,
    windowMs: windowForQuota(quotaPerSecond),
    quotaPerSecond,
    fairSharePerSecond: quotaPerSecond / clients,
  }
}

/** Send and answer one attempt at `now` (after the pacer's wait); returns the time of the answer. */
function attempt(pacer: Pacer, now: number, signal: (at: number) => Signal): number {
  const at = now + pacer.delayMs(now, 1)
  pacer.onSend(at, 1)
  pacer.onResult(at + RTT_MS, signal(at + RTT_MS))
  return at + RTT_MS
}

describe('spending a named lump', () => {
  it('spends every step of a stepped bucket as it lands, 20 lanes sharing it, at k = 0.1, 1 and 10', () => {
    // (At k = 0.1, a step every 6 s, the lanes' buckets spent 40, 20, 20, 40, 20 of each 80 before.)
    for (const k of [0.1, 1, 10]) {
      const { admitted, throttled: refused } = steppedRun(k, 6, 20)
      // The first period holds the full bucket; every later one brings exactly one step, all spent.
      expect(admitted[0]).toBe(100)
      for (let step = 1; step < 6; step++) expect(admitted[step]).toBe(80)
      // Each lane meets at most one 429 per step: its lump runs out, and it waits for the next step.
      for (let step = 1; step < 6; step++) expect(refused[step]).toBeLessThanOrEqual(20)
    }
  })

  it('spends a named lump with AATB too, past the fleet share it keeps to otherwise, at k = 0.1, 1, 10 and 60', () => {
    // Before, a lane keeping to a fleet share never spent a lump: each step came back at the
    // share's pace (stepped Retry-After cells: 1.11–1.31 × the oracle at every k).
    for (const k of [0.1, 1, 10, 60]) {
      const quotaPerSecond = 80 / 60 / k
      let { pacer, now } = admittedLane(aatb(), 1000 * k)
      pacer.onAggregate!(now, fleet(20, quotaPerSecond))
      // The server names the next step, 40 s × k away (two thirds of its 60 s × k interval).
      now = attempt(pacer, now, (at) => throttled(at + 40_000 * k))
      const named = now + 40_000 * k
      now = attempt(pacer, now, () => ok)
      expect(now).toBeGreaterThanOrEqual(named)
      // At the named time the lane spends the lump as its answers come, not one per share spacing.
      for (let i = 0; i < 5; i++) {
        expect(pacer.delayMs(now, 1)).toBe(0)
        now = attempt(pacer, now, () => ok)
      }
      // The lump runs out: the server names the next step, and the lane waits for it.
      now = attempt(pacer, now, (at) => throttled(at + 50_000 * k))
      expect(pacer.delayMs(now, 1)).toBeGreaterThan(49_000 * k)
    }
  })

  it('keeps an AATB lane to its fleet share where its part of the named lump is under one unit', () => {
    // 200 lanes on 80 per minute: a lane's fair part of 40 s of refill is a quarter of a unit. Were
    // every such lane to spend the step as it lands, the fleet would herd into it (100 lanes of 8
    // requests on a stepped bucket: 60 → 373 429s a run, 1.13 → 1.20 × the oracle).
    const quotaPerSecond = 80 / 60
    let { pacer, now } = admittedLane(aatb())
    pacer.onAggregate!(now, fleet(200, quotaPerSecond))
    now = attempt(pacer, now, (at) => throttled(at + 40_000))
    now = attempt(pacer, now, () => ok)
    // Past the named time, the next send waits for the share's spacing, not for the answer.
    expect(pacer.delayMs(now, 1)).toBeGreaterThan(1000)
  })

  it('judges a Retry-After long on the fleet\'s scale, not on a light lane\'s trust-discounted one', () => {
    // A light lane (admitted far below the share the fleet gives it) runs on a scale the fleet's
    // trust stretches many times past the quota's, and on it no step of an 80-per-hour quota
    // looked long: the lane read each 429 as a continuous quota's and backed off for hours.
    const k = 60
    const quotaPerSecond = 80 / 60 / k
    const pacer = aatb().create({ now: T0, random: () => 0.5 })
    let now = T0
    // Two admissions an hour apart: the lane's own admitted rate is a small fraction of its share.
    now = attempt(pacer, now, () => ok) + 3_600_000
    now = attempt(pacer, now, () => ok)
    pacer.onAggregate!(now, fleet(2, quotaPerSecond))
    // The step lands in 5 min (a tenth of the 60 min step); the lane waits for it and spends it.
    now = attempt(pacer, now, (at) => throttled(at + 300_000))
    const named = now + 300_000
    const wait = pacer.delayMs(now, 1)
    expect(wait).toBeGreaterThanOrEqual(300_000 - 1000)
    expect(wait).toBeLessThanOrEqual(300_000 + 1000)
    now = attempt(pacer, now, () => ok)
    expect(now).toBeGreaterThanOrEqual(named)
    expect(pacer.delayMs(now, 1)).toBe(0)
    now = attempt(pacer, now, () => ok)
    expect(pacer.delayMs(now, 1)).toBe(0)
  })

  it('with the fleet\'s quota rate known, reads any Retry-After longer than one unit\'s refill as a lump', () => {
    // On 80 per minute a continuously refilled bucket names at most 0.75 s (1 s in whole seconds):
    // a step 2 s away is a lump (the fitted 2 s limit read it as steady and cut the lane's rate);
    // at k = 10 one unit is 7.5 s (8 s), and a step 9 s away is a lump too (the limit was 20 s).
    for (const [k, retryAfterMs] of [[1, 2000], [10, 9000]] as const) {
      const quotaPerSecond = 80 / 60 / k
      let { pacer, now } = admittedLane(aatb(), 1000 * k)
      // One lane on the quota: its part of what the step brings holds at least one unit.
      pacer.onAggregate!(now, fleet(1, quotaPerSecond))
      now = attempt(pacer, now, (at) => throttled(at + retryAfterMs))
      now = attempt(pacer, now, () => ok)
      for (let i = 0; i < 3; i++) {
        expect(pacer.delayMs(now, 1)).toBe(0)
        now = attempt(pacer, now, () => ok)
      }
    }
  })

  it('reads a Retry-After in milliseconds at its own resolution: a step 0.6 s away is a lump at k = 0.1', () => {
    // At 800 per minute one unit refills in 75 ms. In whole seconds a step 0.6 s away reads "1", as
    // that unit does, and the lane takes it for a continuous quota's; `retry-after-ms: 600` tells it.
    const k = 0.1
    const quotaPerSecond = 80 / 60 / k
    const spends = (signal: (at: number) => Signal): boolean => {
      let { pacer, now } = admittedLane(aatb(), 1000 * k)
      pacer.onAggregate!(now, fleet(1, quotaPerSecond))
      now = attempt(pacer, now, signal)
      now = attempt(pacer, now, () => ok)
      // Spending a lump: each answer lets the next attempt go at once.
      for (let i = 0; i < 3; i++) {
        if (pacer.delayMs(now, 1) > 0) return false
        now = attempt(pacer, now, () => ok)
      }
      return true
    }
    expect(spends((at) => ({ ...throttled(at + 600), retryResolutionMs: 1 }))).toBe(true)
    expect(spends((at) => throttled(at + 1000))).toBe(false)
  })

  it('reads a Retry-After in milliseconds against the quota rate the user gave, as against the fleet\'s', () => {
    // atb({ quotaPerSecond }) knows one unit's refill as AATB does from its operator: at 800 per
    // minute (k = 0.1) a step 0.6 s away, told in milliseconds, is a lump; without the rate the lane
    // compares it with 2 s (whole seconds) and paces through it.
    const quotaPerSecond = 80 / 60 / 0.1
    const spends = (strategy: Strategy): boolean => {
      let { pacer, now } = admittedLane(strategy, 100)
      now = attempt(pacer, now, (at) => ({ ...throttled(at + 600), retryResolutionMs: 1 }))
      now = attempt(pacer, now, () => ok)
      for (let i = 0; i < 3; i++) {
        if (pacer.delayMs(now, 1) > 0) return false
        now = attempt(pacer, now, () => ok)
      }
      return true
    }
    expect(spends(atb({ quotaPerSecond }))).toBe(true)
    expect(spends(atb())).toBe(false)
  })

  it('runs an AATB lane that stopped trusting named lumps on the scale of a fleet quota faster than the paper\'s', () => {
    // Told the fleet's quota rate, a lane whose attempts at named times were refused twice runs its
    // durations on that quota's scale where it is faster than the paper's (k < 1), and at the k = 1
    // values otherwise (stretched there, stepped Retry-After runs at k = 10 and 60 took longer).
    // Before, it ran at the k = 1 values at every k: at k = 0.1 a request's third retry came 56 s
    // after its second, in a run the oracle finishes in 42 s.
    const waits = (k: number): number[] => {
      let { pacer, now } = admittedLane(aatb(), 1000 * k)
      pacer.onAggregate!(now, fleet(20, 80 / 60 / k))
      // A lump named, then refused twice at the named times: the lane stops trusting lumps.
      for (let i = 0; i < 3; i++) now = attempt(pacer, now, (at) => throttled(at + 40_000 * k))
      for (let i = 0; i < 3; i++) now = attempt(pacer, now, () => ok)
      // One request refused again and again, each 429 naming a time 20 s × k away.
      const out: number[] = []
      for (let failures = 1; failures <= 4; failures++) {
        const at = now + pacer.delayMs(now, 1)
        pacer.onSend(at, 1)
        now = at + RTT_MS
        const signal = throttled(now + 20_000 * k)
        pacer.onResult(now, signal)
        const wait = Math.max(pacer.delayMs(now, 1), pacer.retryDelayMs!(now, failures, signal))
        out.push(wait)
        now += wait
      }
      return out
    }
    const atPaper = waits(1)
    // Every wait a tenth of the paper's, within the clock's millisecond.
    expect(atPaper[3]!).toBeGreaterThan(20_000)
    waits(0.1).forEach((w, i) => expect(Math.abs(w - (atPaper[i] as number) / 10)).toBeLessThanOrEqual(1))
  })

  it('takes the 429 that ends a lump for the lump running out, not for a rate too high', () => {
    let { pacer, now } = admittedLane()
    // The first lump's 429 cuts the rate and names the next step, 40 s away.
    now = attempt(pacer, now, (at) => throttled(at + 40_000))
    const cutRate = pacer.ratePerSecond
    expect(pacer.delayMs(now, 1)).toBeGreaterThan(39_000)
    now += pacer.delayMs(now, 1)
    // At the named time the lane spends the lump: each answer lets the next attempt go at once.
    for (let i = 0; i < 5; i++) {
      now = attempt(pacer, now, () => ok)
      expect(pacer.delayMs(now, 1)).toBe(0)
    }
    // The lump runs out: the server names the next one, and the rate is not cut again.
    now = attempt(pacer, now, (at) => throttled(at + 30_000))
    expect(pacer.ratePerSecond).toBeGreaterThanOrEqual(cutRate)
    expect(pacer.delayMs(now, 1)).toBeGreaterThan(29_000)
  })

  it('takes 429s for congestion again once two attempts in a row are refused at the times the server named', () => {
    let { pacer, now } = admittedLane()
    now = attempt(pacer, now, (at) => throttled(at + 40_000))
    const cutRate = pacer.ratePerSecond
    // The attempt at the named time is refused with another long wait (a window that lets one unit
    // back at a time): still trusted as a lump's end, no cut.
    now = attempt(pacer, now, (at) => throttled(at + 40_000))
    expect(pacer.ratePerSecond).toBeCloseTo(cutRate, 9)
    // Refused again at the next named time: no longer a lump's end but congestion, and the rate is cut.
    now = attempt(pacer, now, (at) => throttled(at + 40_000))
    expect(pacer.ratePerSecond).toBeLessThan(cutRate)
  })

  it('while an attempt is out, waits for its answer instead of waking every round trip', () => {
    const lingering = (answerAfterMs: number): { pacer: Pacer; sentAt: number; wakeUps: number } => {
      let { pacer, now } = admittedLane()
      now = attempt(pacer, now, (at) => throttled(at + 40_000))
      now += pacer.delayMs(now, 1)
      // At the named time two attempts go out together: one answers at once, the other lingers
      // (a slow upstream).
      pacer.onSend(now, 1)
      pacer.onSend(now, 1)
      pacer.onResult(now + RTT_MS, ok)
      let wakeUps = 0
      for (let t = now + RTT_MS; t < now + answerAfterMs && wakeUps < 1000; wakeUps++) {
        const waitMs = pacer.delayMs(t, 1)
        if (waitMs === 0) break // the lane turned calm: it no longer paces at all
        t += waitMs
      }
      return { pacer, sentAt: now, wakeUps }
    }
    // Each wait is at least as long as the attempt has been out, so the polls thin out (its answer,
    // when it comes, wakes the lane anyway); they were one per round trip (20 ms) until the lane
    // turned calm, about 4,000.
    expect(lingering(300_000).wakeUps).toBeLessThanOrEqual(20)
    const { pacer, sentAt } = lingering(5000)
    expect(pacer.delayMs(sentAt + 1000, 1)).toBeGreaterThanOrEqual(1000)
    // The answer comes: the lump is spent as fast as the answers come again.
    pacer.onResult(sentAt + 5000, ok)
    expect(pacer.delayMs(sentAt + 5000, 1)).toBe(0)
  })

  it('paces again when a lump ends with a short Retry-After (units come back one by one)', () => {
    let { pacer, now } = admittedLane()
    now = attempt(pacer, now, (at) => throttled(at + 40_000))
    now = attempt(pacer, now, () => ok)
    expect(pacer.delayMs(now, 1)).toBe(0)
    now = attempt(pacer, now, (at) => throttled(at + 1000))
    now += pacer.delayMs(now, 1)
    now = attempt(pacer, now, () => ok)
    expect(pacer.delayMs(now, 1)).toBeGreaterThan(0)
  })
})

describe('LumpSpending', () => {
  it('trusts named times until two attempts at them in a row are refused, and again after one is admitted', () => {
    const lump = new LumpSpending()
    expect(lump.trusted()).toBe(true)
    for (const admitted of [false, false]) {
      lump.named(T0 + 1000)
      lump.sent(T0 + 1000)
      lump.answered(admitted)
    }
    expect(lump.trusted()).toBe(false)
    lump.named(T0 + 5000)
    lump.sent(T0 + 5000)
    lump.answered(true)
    expect(lump.trusted()).toBe(true)
  })

  it('judges only the first attempt sent at or after the named time', () => {
    const lump = new LumpSpending()
    lump.named(T0 + 1000)
    lump.sent(T0 + 500) // before the named time: not the probe
    lump.answered(false)
    lump.sent(T0 + 1000)
    lump.answered(false)
    lump.answered(false) // no probe out: ignored
    expect(lump.trusted()).toBe(true)
  })

  it('stops trusting after a trickle until an attempt at a named time is admitted', () => {
    const lump = new LumpSpending()
    lump.trickled()
    expect(lump.trusted()).toBe(false)
    lump.named(T0)
    lump.sent(T0)
    lump.answered(true)
    expect(lump.trusted()).toBe(true)
  })
})
