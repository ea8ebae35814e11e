import { describe, expect, it } from 'vitest'
import { aatb, AATB_DEFAULTS, createAatbPacer, fleetTimeScale } from '../../../src/core/pacers/aatb.js'
import { AATB_CONSTANTS, resolveAatbOptions } from '../../../src/core/pacers/aatb-options.js'
import { atb } from '../../../src/core/pacers/atb.js'
import { resolveAtbOptions } from '../../../src/core/pacers/atb-options.js'
import type { Aggregate, Pacer, Signal, Strategy } from '../../../src/core/types.js'

const T0 = 1_700_000_000_000
const random = () => 0.5
const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
/** Spacing (ms) of one unit at a fair share: the lane keeps to `shareMargin` of its share. */
const spacingAt = (share: number) => 1000 / (share * AATB_DEFAULTS.shareMargin)
const congested = (extra: Partial<Aggregate> = {}): Aggregate =>
  ({ activeClients: 4, totalAttempts: 40, throttledReports: 3, windowMs: 30_000, quotaPerSecond: 2, fairSharePerSecond: 0.5, ...extra })

/** Send whenever allowed, with a 429 every `every`-th attempt; record every delay decision. */
function drive(pacer: Pacer, steps: number, every = 5): number[] {
  const delays: number[] = []
  let now = T0
  for (let i = 1; i <= steps; i++) {
    const delay = pacer.delayMs(now, 1)
    delays.push(delay)
    now += delay
    pacer.onSend(now, 1)
    now += 50
    pacer.onResult(now, i % every === 0 ? throttled : ok)
    delays.push(Math.round(pacer.ratePerSecond * 1000))
  }
  return delays
}

describe('aatb()', () => {
  it('is named aatb and, without aggregates, decides exactly as the default atb()', () => {
    expect(aatb().name).toBe('aatb')
    const plain = drive(atb().create({ now: T0, random }), 60)
    const assisted = drive(aatb().create({ now: T0, random }), 60)
    expect(assisted).toEqual(plain)
    expect(plain.some((d) => d > 0)).toBe(true) // the comparison covers pacing, not only free sends
  })

  it('ignores aggregates while the fleet is calm', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ throttledReports: 0 }))
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 10, ok)
    expect(pacer.delayMs(T0 + 20, 1)).toBe(0)
  })

  it('paces at the fair share once the fleet reported 429s and a local 429 confirmed it', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 100, throttled)
    pacer.onAggregate!(T0 + 200, congested({ fairSharePerSecond: 0.1 })) // one attempt per 10 s
    const plain = atb().create({ now: T0, random })
    plain.onSend(T0, 1)
    plain.onResult(T0 + 100, throttled)
    const now = T0 + 3_000
    expect(pacer.delayMs(now, 1)).toBeCloseTo(Math.max(plain.delayMs(now, 1), T0 + spacingAt(0.1) - now), 3)
    expect(pacer.delayMs(T0 + spacingAt(0.1), 1)).toBe(plain.delayMs(T0 + spacingAt(0.1), 1))
    expect(pacer.ratePerSecond).toBeLessThanOrEqual(0.1)
  })

  it('falls back to quota / active clients when the server sent no fair share', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: undefined, quotaPerSecond: 1, activeClients: 5 }))
    pacer.onSend(T0, 1)
    expect(pacer.delayMs(T0, 1)).toBeCloseTo(spacingAt(0.2), 3)
    expect(pacer.delayMs(T0 + spacingAt(0.2), 1)).toBe(0)
  })

  it('keeps fleet pacing for the hold (10 × the longer of the aggregator window and the fair spacing) after the last reported 429, then returns to ATB', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: 0.2 })) // 30 s window, 5 s fair spacing: held 300 s
    pacer.onAggregate!(T0 + 30_000, congested({ throttledReports: 0, fairSharePerSecond: 0.2 }))
    pacer.onSend(T0 + 40_000, 1)
    expect(pacer.delayMs(T0 + 40_000, 1)).toBeCloseTo(spacingAt(0.2), 3)
    pacer.onSend(T0 + 299_000, 1)
    expect(pacer.delayMs(T0 + 299_000, 1)).toBeCloseTo(spacingAt(0.2), 3)
    pacer.onSend(T0 + 301_000, 1)
    expect(pacer.delayMs(T0 + 301_000, 1)).toBe(0)
  })

  it('holds a fleet whose fair spacing is longer than the aggregator window for 10 fair spacings', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: 0.01 })) // 100 s fair spacing: held 1,000 s
    pacer.onSend(T0 + 990_000, 1)
    expect(pacer.delayMs(T0 + 990_000, 1)).toBeGreaterThan(0)
    pacer.onSend(T0 + 1_001_000, 1)
    expect(pacer.delayMs(T0 + 1_001_000, 1)).toBe(0)
  })

  it('stays congested past the hold while the fleet still spends most of the quota', () => {
    const make = () => aatb().create({ now: T0, random })
    const busy = make()
    const winding = make()
    for (const pacer of [busy, winding]) pacer.onAggregate!(T0, congested({ fairSharePerSecond: 0.2 }))
    busy.onAggregate!(T0 + 50_000, congested({ throttledReports: 0, totalAttempts: 60 })) // 2/s: the whole quota
    winding.onAggregate!(T0 + 50_000, congested({ throttledReports: 0, totalAttempts: 15 })) // 0.5/s
    // winding: held 300 s from T0; busy: renewed at T0 + 50 s, held to T0 + 350 s
    for (const pacer of [busy, winding]) pacer.onSend(T0 + 320_000, 1)
    expect(busy.delayMs(T0 + 320_000, 1)).toBeGreaterThan(1_000)
    expect(winding.delayMs(T0 + 320_000, 1)).toBe(0)
  })

  /** A lane that got `n` successes `gapMs` apart, then a 429; returns the time of the 429. */
  function throttledAfter(pacer: Pacer, n: number, gapMs = 1_000): number {
    let now = T0
    for (let i = 0; i < n; i++, now += gapMs) {
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, ok)
    }
    pacer.onSend(now, 1)
    pacer.onResult(now + 20, throttled)
    return now + 20
  }

  it('after a 429, keeps ATB\'s back-off while dry, then lets the share set the pace once the quota admits it again', () => {
    const pacer = aatb().create({ now: T0, random })
    const plain = atb().create({ now: T0, random })
    let now = throttledAfter(pacer, 20)
    throttledAfter(plain, 20)
    pacer.onAggregate!(now, congested({ fairSharePerSecond: 0.5 }))
    // dry: the fleet's view only adds to ATB's delay
    expect(pacer.delayMs(now, 1)).toBeGreaterThanOrEqual(plain.delayMs(now, 1))
    now += plain.delayMs(now, 1)
    for (const p of [pacer, plain]) {
      p.onSend(now, 1)
      p.onResult(now + 20, ok)
    }
    now += 20
    const atbWaits = plain.delayMs(now, 1)
    expect(atbWaits).toBeGreaterThan(spacingAt(0.5)) // ATB alone regains its rate slowly
    expect(pacer.delayMs(now, 1)).toBeLessThanOrEqual(Math.ceil(spacingAt(0.5)))
    // the debt those hurried sends leave in the inner ATB never stalls the lane later
    for (let i = 0; i < 10; i++) {
      now += pacer.delayMs(now, 1)
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, ok)
      now += 20
    }
    pacer.onResult(now, throttled)
    expect(pacer.delayMs(now, 1)).toBeLessThanOrEqual(Math.ceil(1000 / pacer.ratePerSecond) + 1)
  })

  it('lets a dry lane probe once at its share when the fleet left the quota unused, not again until a success', () => {
    const pacer = aatb().create({ now: T0, random })
    let now = throttledAfter(pacer, 20, 5_000) // ATB's own spacing after the cut: about 14 s
    const idle = () => congested({ fairSharePerSecond: 0.25, throttledReports: 0, totalAttempts: 0 })
    pacer.onAggregate!(now, congested({ fairSharePerSecond: 0.25 }))
    now += 100
    const dryWait = pacer.delayMs(now, 1)
    expect(dryWait).toBeGreaterThan(spacingAt(0.25))
    pacer.onAggregate!(now, idle()) // the fleet sent nothing for a window: the quota has been refilling
    const probeWait = pacer.delayMs(now, 1)
    expect(probeWait).toBeLessThanOrEqual(Math.ceil(spacingAt(0.25)))
    now += probeWait
    pacer.onSend(now, 1)
    pacer.onResult(now + 20, throttled) // the probe found it dry all the same
    now += 40
    pacer.onAggregate!(now, idle())
    expect(pacer.delayMs(now, 1)).toBeGreaterThan(spacingAt(0.25))
  })

  it('counts a fleet below half the quota rate as leaving it unused (the probe), not one above', () => {
    // The quota is 2/s over a 30 s window: 24 attempts are 40% of it, 36 are 60%.
    const dryWaitAfter = (attempts: number) => {
      const pacer = aatb().create({ now: T0, random })
      let now = throttledAfter(pacer, 20, 5_000)
      pacer.onAggregate!(now, congested({ fairSharePerSecond: 0.25 }))
      now += 100
      pacer.onAggregate!(now, congested({ fairSharePerSecond: 0.25, throttledReports: 0, totalAttempts: attempts }))
      return pacer.delayMs(now, 1)
    }
    expect(dryWaitAfter(24)).toBeLessThanOrEqual(Math.ceil(spacingAt(0.25)))
    expect(dryWaitAfter(36)).toBeGreaterThan(spacingAt(0.25))
  })

  it('hurries a lane by at most a few times what it got through, whatever the aggregate says', () => {
    const pacer = aatb().create({ now: T0, random })
    let now = throttledAfter(pacer, 3, 20_000) // three successes 20 s apart: admitted at 0.05/s
    pacer.onAggregate!(now, congested({ fairSharePerSecond: 1_000, totalAttempts: 0, throttledReports: 1 }))
    now += 100
    pacer.onSend(now, 1)
    pacer.onResult(now + 20, ok)
    now += 20
    expect(pacer.delayMs(now, 1)).toBeGreaterThan(5_000)
  })

  it('never shortens a Retry-After gate', () => {
    const pacer = aatb().create({ now: T0, random })
    const now = throttledAfter(pacer, 20)
    pacer.onResult(now, { ...throttled, retryAt: now + 30_000 })
    pacer.onAggregate!(now + 10, congested({ fairSharePerSecond: 0.5, throttledReports: 0, totalAttempts: 0 }))
    expect(pacer.delayMs(now + 10, 1)).toBeGreaterThanOrEqual(30_000 - 10)
  })

  it('ignores stale and nonsensical aggregates', () => {
    const pacer = aatb().create({ now: T0, random })
    pacer.onAggregate!(T0, congested({ fairSharePerSecond: 0.1 }))
    for (let i = 0; i < 3; i++) pacer.takeReport!(T0 + 95_000) // three reports unanswered: telemetry is down
    pacer.onSend(T0 + 95_000, 1)
    expect(pacer.delayMs(T0 + 95_000, 1)).toBe(0)
    for (const bad of [congested({ activeClients: 0 }), congested({ fairSharePerSecond: -1 }), congested({ totalAttempts: Number.NaN })]) {
      const fresh = aatb().create({ now: T0, random })
      fresh.onAggregate!(T0, bad)
      fresh.onSend(T0, 1)
      expect(fresh.delayMs(T0, 1)).toBe(0)
    }
  })

  it('reports counts every report window while active and promptly after a 429', () => {
    const pacer = aatb().create({ now: T0, random })
    expect(pacer.reportDueAt!(T0)).toBe(Infinity) // nothing happened: nothing to say
    expect(pacer.reportDueAt!(T0, 2)).toBe(T0) // a backlog makes the lane active
    for (let i = 0; i < 3; i++) pacer.onSend(T0 + i, 1)
    expect(pacer.reportDueAt!(T0 + 5)).toBe(T0 + 5) // first activity: report at once
    expect(pacer.takeReport!(T0 + 5)).toEqual({ attempts: 3, throttled: 0 })
    expect(pacer.reportDueAt!(T0 + 6)).toBe(T0 + 5 + 30_000)
    pacer.onSend(T0 + 10, 1)
    pacer.onResult(T0 + 20, { ...throttled, policies: [{ name: 'default', quota: 100, windowMs: 60_000 }] })
    expect(pacer.reportDueAt!(T0 + 20)).toBe(T0 + 20)
    expect(pacer.takeReport!(T0 + 20)).toEqual({ attempts: 1, throttled: 1, quota: { quota: 100, windowMs: 60_000 } })
    pacer.onSend(T0 + 30, 1)
    pacer.onResult(T0 + 40, throttled)
    expect(pacer.reportDueAt!(T0 + 40)).toBe(T0 + 40) // every 429 is reported once, at once
    expect(pacer.takeReport!(T0 + 40)).toEqual({ attempts: 1, throttled: 1, quota: { quota: 100, windowMs: 60_000 } })
    expect(pacer.reportDueAt!(T0 + 41)).toBe(T0 + 40 + 30_000) // then the routine period again
    expect(pacer.reportDueAt!(T0 + 40 + 60_000)).toBe(Infinity) // idle for 2 aggregator windows: stops
  })

  it('persists the inner ATB state and resumes from it', () => {
    const pacer = aatb().create({ now: T0, random })
    drive(pacer, 20)
    const later = T0 + 200_000 // after everything drive() did
    const state = pacer.toJSON(later)
    expect(state).toMatchObject({ kind: 'aatb', version: 1, savedAt: later })
    expect((state.inner as { kind: string }).kind).toBe('atb')
    const resumed = aatb().create({ now: later, random, state: JSON.parse(JSON.stringify(state)) })
    expect(resumed.ratePerSecond).toBe(pacer.ratePerSecond)
    expect(resumed.delayMs(later, 1)).toBe(pacer.delayMs(later, 1))
    // foreign state is ignored
    const fresh = aatb().create({ now: later, random, state: { kind: 'atb', version: 1, savedAt: 0 } })
    expect(fresh.delayMs(later, 1)).toBe(0)
  })
})

describe('aatb() with RateLimit hints: the fleet tells the quota share its turn', () => {
  const policy: Pick<Signal, 'policies'> = { policies: [{ name: 'default', quota: 100, windowMs: 75_000 }] }
  /**
   * A light lane on a continuously refilled bucket (100 per 75 s) that the fleet is draining:
   * 60 left, one send, 5 left 30 s later. ATB alone waits out its fixed 60 s cap from that send.
   */
  function lightLane(pacer: Pacer): Pacer {
    pacer.onResult(T0, { ...ok, remaining: 60, resetAt: T0 + 30_000, ...policy })
    pacer.onSend(T0 + 1000, 1)
    pacer.onResult(T0 + 31_000, { ...ok, remaining: 5, resetAt: T0 + 102_250, ...policy })
    return pacer
  }
  // 50 clients active, none throttled: a calm fleet, which the fair-share pacing ignores.
  const calmFleet: Aggregate = { activeClients: 50, totalAttempts: 60, throttledReports: 0, windowMs: 30_000, quotaPerSecond: 4 / 3, fairSharePerSecond: 4 / 3 / 50 }

  it('comes back at its fair turn among the fleet rather than at the fixed cap', () => {
    const alone = lightLane(atb().create({ now: T0, random }))
    const assisted = aatb().create({ now: T0, random })
    assisted.onAggregate!(T0 + 20_000, calmFleet)
    lightLane(assisted)
    expect(alone.delayMs(T0 + 31_000, 1)).toBe(30_000)
    const turn = assisted.delayMs(T0 + 31_000, 1)
    expect(turn).toBeGreaterThan(10_000)
    expect(turn).toBeLessThan(20_000)
  })

  it('falls back to the fixed caps once the aggregate is stale (3 reports unanswered)', () => {
    const alone = lightLane(atb().create({ now: T0, random }))
    const assisted = aatb().create({ now: T0, random })
    assisted.onAggregate!(T0 + 20_000, calmFleet)
    lightLane(assisted)
    for (let i = 0; i < AATB_CONSTANTS.staleReports - 1; i++) assisted.takeReport!(T0 + 31_000)
    expect(assisted.delayMs(T0 + 31_000, 1)).toBeLessThan(alone.delayMs(T0 + 31_000, 1)) // still fresh
    assisted.takeReport!(T0 + 31_000)
    expect(assisted.delayMs(T0 + 31_000, 1)).toBe(alone.delayMs(T0 + 31_000, 1))
  })
})

describe('aatb(): the fleet\'s hold yields to the server\'s count', () => {
  // A stepped quota of 80 per 60 s shared by 4 clients: the lane's fair fraction is a quarter.
  const policies = [{ name: 'default', quota: 80, windowMs: 60_000 }]
  const fleet: Aggregate = { activeClients: 4, totalAttempts: 40, throttledReports: 3, windowMs: 30_000, quotaPerSecond: 4 / 3, fairSharePerSecond: 1 / 3 }
  const fairSpacingMs = spacingAt(1 / 3)
  /** A lane the quota ran dry on, told its fair share, then told `remaining` units are left until the next step. */
  function afterStep(pacer: Pacer, remaining: number, assisted = true): Pacer {
    pacer.onSend(T0, 1)
    pacer.onResult(T0 + 100, { ...throttled, remaining: 0, resetAt: T0 + 10_000, policies })
    if (assisted) pacer.onAggregate!(T0 + 200, fleet)
    pacer.onSend(T0 + 10_000, 1)
    pacer.onResult(T0 + 10_100, { ...ok, remaining, resetAt: T0 + 70_000, policies })
    return pacer
  }
  /** Send whenever allowed (answers admitted, with no new count), `sends` times; the delays asked. */
  function sendAll(pacer: Pacer, sends: number): number[] {
    const delays: number[] = []
    let now = T0 + 10_100
    for (let i = 0; i < sends; i++) {
      const delay = pacer.delayMs(now, 1)
      delays.push(delay)
      now += delay
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, ok)
    }
    return delays
  }

  it('lets the lane spend its fair fraction of what the server says is left, then holds it to its share again', () => {
    const assisted = sendAll(afterStep(aatb().create({ now: T0, random }), 40), 12)
    const alone = sendAll(afterStep(atb().create({ now: T0, random }), 40, false), 12)
    // A quarter of 40: ten sends go when the inner ATB lets them (here at once), not a fair spacing apart.
    expect(assisted.slice(0, 10)).toEqual(alone.slice(0, 10))
    expect(Math.max(...assisted.slice(0, 10))).toBeLessThan(fairSpacingMs / 10)
    // Their admissions were the count's promise: they neither refute the aggregate nor become
    // the lane's spacing, so the fleet holds the eleventh to the fair spacing.
    expect(assisted[10]).toBeCloseTo(fairSpacingMs, 0)
    expect(assisted[11]).toBeCloseTo(fairSpacingMs, 0)
  })

  it('holds the lane to its share when its fraction of the count is less than a send', () => {
    const assisted = sendAll(afterStep(aatb().create({ now: T0, random }), 3), 3)
    expect(assisted[0]).toBeGreaterThan(fairSpacingMs / 2) // the fleet's hold, from the send at T0 + 10 s
    expect(assisted[1]).toBeCloseTo(fairSpacingMs, 0)
  })
})

describe('aatb(): an aggregate moves a lane only as far as the lane\'s own evidence bears out', () => {
  /**
   * A fleet of `clients` aatb lanes, each with a backlog that never empties, on a continuous
   * token bucket (capacity 2) refilling `perMinute`; every 30 s each lane receives the honest
   * aggregate: the fleet's attempts and 429s of the last 30 s, its quota rate and an equal share.
   * Every lane asks delayMs before every attempt; an answer comes 20 ms after the send.
   * Returns each lane's send times and the fleet's 429 times.
   */
  function fleetOnSharedQuota(clients: number, perMinute: number, durationMs: number) {
    const ratePerMs = perMinute / 60_000
    const capacity = 2
    let tokens = capacity
    let tokensAt = T0
    // The lanes arrive one by one over one fair spacing, as a fleet does.
    const lanes = Array.from({ length: clients }, (_, i) => ({ pacer: aatb().create({ now: T0, random }), startAt: T0 + (i * 60_000) / perMinute, nextAt: T0 + (i * 60_000) / perMinute, sends: [] as number[] }))
    const attempts: number[] = []
    const throttles: number[] = []
    const windowMs = 30_000
    let aggregateAt = T0
    for (let step = 0; step < 1_000_000; step++) {
      const lane = lanes.reduce((a, b) => (b.nextAt < a.nextAt ? b : a))
      if (aggregateAt <= lane.nextAt) {
        const now = aggregateAt
        const aggregate: Aggregate = {
          activeClients: clients,
          totalAttempts: attempts.filter((t) => t > now - windowMs).length,
          throttledReports: throttles.filter((t) => t > now - windowMs).length,
          windowMs,
          quotaPerSecond: ratePerMs * 1000,
          fairSharePerSecond: (ratePerMs * 1000) / clients,
        }
        for (const l of lanes) {
          l.pacer.onAggregate!(now, aggregate)
          l.nextAt = Math.max(now, l.startAt, Math.min(l.nextAt, now + l.pacer.delayMs(now, 1)))
        }
        aggregateAt += windowMs
        if (aggregateAt > T0 + durationMs) break
        continue
      }
      const now = lane.nextAt
      const delay = lane.pacer.delayMs(now, 1)
      if (delay > 0) {
        lane.nextAt = now + delay
        continue
      }
      lane.pacer.onSend(now, 1)
      lane.sends.push(now)
      attempts.push(now)
      tokens = Math.min(capacity, tokens + (now + 10 - tokensAt) * ratePerMs)
      tokensAt = now + 10
      const admitted = tokens >= 1
      if (admitted) tokens -= 1
      else throttles.push(now + 20)
      lane.pacer.onResult(now + 20, admitted ? ok : throttled)
      lane.nextAt = now + 20 + lane.pacer.delayMs(now + 20, 1)
    }
    return { lanes, throttles }
  }

  it('paces each of 40 clients sharing 2 per minute at about the 1,200 s fair spacing', () => {
    const fairMs = (60_000 / 2) * 40 // 1,200 s
    const durationMs = 40 * fairMs
    const { lanes, throttles } = fleetOnSharedQuota(40, 2, durationMs)
    const settledAt = T0 + 10 * fairMs
    const spacings = lanes.map((l) => {
      const late = l.sends.filter((t) => t >= settledAt)
      return (late[late.length - 1]! - late[0]!) / (late.length - 1)
    })
    const mean = spacings.reduce((a, b) => a + b, 0) / spacings.length
    // Keeping to 0.97 of its share, a lane sends every fairMs / 0.97; none runs at the old 90–120 s caps.
    expect(mean).toBeGreaterThan(0.95 * fairMs)
    expect(mean).toBeLessThan(1.15 * fairMs)
    expect(Math.min(...spacings)).toBeGreaterThan(0.8 * fairMs)
    // Once settled, most sends are admitted (a 2-token bucket still refuses some when two lanes' turns fall close).
    const lateSends = lanes.reduce((n, l) => n + l.sends.filter((t) => t >= settledAt).length, 0)
    expect(throttles.filter((t) => t >= settledAt).length).toBeLessThan(0.2 * lateSends)
  })

  /**
   * One lane whose calls arrive every `arrivalMs` and the API admits every one, while a
   * hostile aggregate (every report window) says the fleet is congested and gives `share`.
   * Every duration (arrivals, round trip, report window, the aggregate's window and TTL) × k.
   * Returns how long the pacer held each call back once the lane was free to send it.
   */
  function hostileRun(k: number, share: number, calls = 40, arrivalMs = 1_000) {
    const reportWindowMs = AATB_DEFAULTS.reportWindowMs * k
    // Default options: every duration AATB decides with comes from the aggregate (its window × k) or the lane.
    const pacer = aatb().create({ now: T0, random })
    const hostile = congested({ fairSharePerSecond: share, quotaPerSecond: share * 4, windowMs: 30_000 * k })
    let nextAggregateAt = T0
    let now = T0
    const held: number[] = []
    for (let i = 0; i < calls; i++) {
      const arrival = T0 + i * arrivalMs * k
      now = Math.max(now, arrival)
      const readyAt = now
      for (let guard = 0; guard < 10_000; guard++) {
        while (nextAggregateAt <= now) {
          pacer.onAggregate!(nextAggregateAt, hostile)
          nextAggregateAt += reportWindowMs
        }
        const delay = pacer.delayMs(now, 1)
        if (delay <= 0) break
        now = Math.min(now + delay, nextAggregateAt)
      }
      pacer.onSend(now, 1)
      held.push(now - readyAt)
      now += 20 * k
      pacer.onResult(now, ok)
    }
    return held
  }

  it.each([0.1, 60])('a hostile aggregate claiming a tiny share cannot stall a lane the API admits (k = %s)', (k) => {
    const held = hostileRun(k, 1e-9) // "send once in 30 years"
    // The bound: before the lane has a spacing of its own, each hold is at most 3 report windows
    // from its last send (with one, at most 3 × that spacing), and after 4 admissions of sends the
    // aggregate called early it holds the lane no more until the lane meets a 429 itself. So at most
    // the 4 sends after the first are held, and from the 6th call on the lane goes at its own pace.
    const reportWindowMs = AATB_DEFAULTS.reportWindowMs * k
    expect(held[0]).toBe(0)
    expect(held.slice(1, 5).every((h) => h > 0 && h <= 3 * reportWindowMs)).toBe(true)
    expect(held.slice(5).every((h) => h === 0)).toBe(true)
    // every time × k: the same decisions, every hold × k (the bound scales with k)
    expect(held.map((h) => Math.round(h / k))).toEqual(hostileRun(1, 1e-9).map((h) => Math.round(h)))
  })

  // The inner ATB runs on the time scale of the aggregate's quota rate, counted only as far as the
  // lane's admissions bear out (fleetTimeScale), so the claim moves it alike at every k.
  it.each([0.1, 1, 60])('a hostile aggregate claiming a huge share cannot hurry a lane past 3 × its admitted rate (k = %s)', (k) => {
    const pacer = aatb({ reportWindowMs: AATB_DEFAULTS.reportWindowMs * k }).create({ now: T0, random })
    const plain = atb().create({ now: T0, random })
    let now = T0
    for (let i = 0; i < 5; i++, now += 20_000 * k) { // admitted every 20 s × k, then a 429
      for (const p of [pacer, plain]) {
        p.onSend(now, 1)
        p.onResult(now + 20 * k, i >= 4 ? throttled : ok)
      }
    }
    now += 20 * k
    pacer.onAggregate!(now, congested({ fairSharePerSecond: 1e9, quotaPerSecond: 4e9, totalAttempts: 0, windowMs: 30_000 * k }))
    const lastSend = now
    for (const p of [pacer, plain]) {
      p.onSend(now, 1)
      p.onResult(now + 20 * k, ok)
    }
    now += 20 * k
    // Its own admitted rate: 4 intervals since its first admission. The hurry may shorten ATB's own
    // wait to no less than the spacing at 3 × that rate, whatever the aggregate claims.
    const admittedPerMs = 4 / (now - (T0 + 20 * k))
    const hurryBoundMs = lastSend + 1 / (3 * admittedPerMs) - now
    const own = plain.delayMs(now, 1)
    expect(own).toBeGreaterThan(hurryBoundMs) // the hurry is what decides here
    expect(pacer.delayMs(now, 1)).toBe(Math.ceil(hurryBoundMs))
  })
})

describe('aatb(): every time × k, every decision × k (default options)', () => {
  /**
   * A lane hearing a congested fleet (aggregator window 30 s × k, fair share 0.2/k per second)
   * that then goes calm; sends at fixed times × k; reports after activity and after an idle spell.
   * Returns every delay and report time, divided by k.
   */
  function scaledRun(k: number): number[] {
    const pacer = aatb().create({ now: T0, random })
    const at = (ms: number) => T0 + ms * k
    const out: number[] = []
    const record = (ms: number) => out.push(Math.round(ms / k))
    pacer.onAggregate!(at(0), congested({ fairSharePerSecond: 0.2 / k, quotaPerSecond: 2 / k, totalAttempts: 10, windowMs: 30_000 * k }))
    for (const t of [1_000, 40_000, 200_000, 299_000, 301_000]) {
      // calm aggregates every window: no 429s, a quarter of the quota spent
      pacer.onAggregate!(at(t - 1), congested({ throttledReports: 0, fairSharePerSecond: 0.2 / k, quotaPerSecond: 2 / k, totalAttempts: 15, windowMs: 30_000 * k }))
      record(pacer.delayMs(at(t), 1))
      pacer.onSend(at(t), 1)
      record(pacer.delayMs(at(t), 1))
      pacer.onResult(at(t) + 20 * k, ok)
      record(pacer.reportDueAt!(at(t) + 20 * k) - T0)
    }
    pacer.takeReport!(at(301_100))
    record(pacer.reportDueAt!(at(301_200)) - T0) // the routine period: one aggregator window
    expect(pacer.reportDueAt!(at(301_100 + 61_000))).toBe(Infinity) // idle 2 aggregator windows: no more reports
    pacer.onResult(at(302_000), throttled)
    record(pacer.reportDueAt!(at(302_000)) - T0) // a 429 is reported at once
    return out
  }

  it.each([0.01, 0.1, 60, 100])('k = %s makes the decisions of k = 1, every time × k', (k) => {
    const base = scaledRun(1)
    // the hold is 10 aggregator windows (300 s × k): sends at 40 s and 200 s × k are held, at 301 s × k not
    // records per send: [delay before, delay right after, report due]
    expect(base[4]).toBeGreaterThan(0)
    expect(base[7]).toBeGreaterThan(0)
    expect(base[10]).toBeGreaterThan(0)
    expect(base[13]).toBeLessThan(base[10]!)
    expect(scaledRun(k)).toEqual(base)
  })
})

describe('aatb(): the fleet\'s quota rate gives the inner ATB its time scale', () => {
  it('reads the quota\'s time scale from the fleet\'s quota rate: 1 at the paper\'s 100 per 75 s, 60 at 80 per hour', () => {
    expect(fleetTimeScale(100 / 75, undefined, 0)).toBeCloseTo(1, 12)
    expect(fleetTimeScale(80 / 3600, undefined, 0)).toBeCloseTo(60, 9)
    expect(fleetTimeScale(800 / 60, undefined, 0)).toBeCloseTo(0.1, 12)
    // A lane admitted at its share (or up to 3 × less) takes the fleet's quota as it is.
    expect(fleetTimeScale(800 / 60, 800 / 60 / 20, 800 / 60 / 60)).toBeCloseTo(0.1, 12)
  })

  it('is bounded by the lane\'s own admissions both ways: a tiny or a huge claimed quota moves it only as far as they bear out', () => {
    // The API admits this lane alone at 2 per second: the fleet's quota is at least that.
    expect(fleetTimeScale(1e-9, 1e-10, 2)).toBeCloseTo(100 / 75 / 2, 12)
    expect(fleetTimeScale(1e-9, undefined, Infinity)).toBeGreaterThan(0)
    // A share of 1e9/s for a lane admitted at 0.05/s: the quota counts 30 × 0.05 / 1e9 of its claim.
    expect(fleetTimeScale(4e9, 1e9, 0.05)).toBeCloseTo(100 / 75 / (4e9 * ((30 * 0.05) / 1e9)), 9)
    // A light lane admitted at a tenth of its share still takes the fleet's quota as it is.
    expect(fleetTimeScale(800 / 60, 1, 0.1)).toBeCloseTo(0.1, 12)
  })

  /**
   * A lane admitted 20 times a second apart × k, then meeting 429s now and then, hearing a calm
   * fleet of quota 2/k per second: every wait the inner ATB asks for, divided by k.
   */
  function innerWaits(k: number, quotaTold = true): number[] {
    const pacer = aatb().create({ now: T0, random })
    const out: number[] = []
    let now = T0
    const calm = () => pacer.onAggregate!(now, { activeClients: 4, totalAttempts: 4, throttledReports: 0, windowMs: 30_000 * k, ...(quotaTold ? { quotaPerSecond: 2 / k } : {}) })
    calm()
    for (let i = 0; i < 40; i++) {
      const wait = pacer.delayMs(now, 1)
      out.push(wait / k)
      now += wait
      pacer.onSend(now, 1)
      now += 20 * k
      pacer.onResult(now, i >= 20 && i % 3 === 0 ? throttled : ok)
      if (i < 20) now += 1000 * k
      if (i % 10 === 0) calm()
    }
    return out
  }

  it.each([0.01, 0.1, 60])('k = %s: the same status-only script with every time × k, every wait × k', (k) => {
    const base = innerWaits(1)
    expect(base.filter((w) => w > 0).length).toBeGreaterThan(5)
    // Whole-millisecond waits move the script's clock: within 1% (read on the k = 1 clock).
    innerWaits(k).forEach((w, i) => expect(Math.abs(w - base[i]!)).toBeLessThanOrEqual(0.01 * base[i]! + 2 / Math.min(1, k)))
  })

  it('the control: told no quota rate, the lane measures its own scale and the same script × 60 waits otherwise', () => {
    const base = innerWaits(1)
    const untold = innerWaits(60, false)
    expect(untold.some((w, i) => Math.abs(w - base[i]!) > 0.05 * base[i]! + 2)).toBe(true)
  })
})

describe('aatb(): spending a named lump on the fleet\'s quota scale', () => {
  /**
   * A lane admitted 10 times a second × k apart in a congested fleet of 4 on 80 per minute ÷ k,
   * then refused with a lump named 40 s × k ahead, spending it, refused again at its end: every
   * wait the lane asks for, divided by k.
   */
  function lumpWaits(k: number): number[] {
    const quotaPerSecond = 80 / 60 / k
    const fleet: Aggregate = { activeClients: 4, totalAttempts: 8, throttledReports: 2, windowMs: 30_000 * k, quotaPerSecond, fairSharePerSecond: quotaPerSecond / 4 }
    const pacer = aatb().create({ now: T0, random })
    const out: number[] = []
    let now = T0
    const send = (answer: (at: number) => Signal) => {
      const wait = pacer.delayMs(now, 1)
      out.push(wait / k)
      now += wait
      pacer.onSend(now, 1)
      now += 20
      pacer.onResult(now, answer(now))
    }
    for (let i = 0; i < 10; i++) {
      send(() => ok)
      now += 1000 * k
    }
    pacer.onAggregate!(now, fleet)
    send((at) => ({ kind: 'throttled', status: 429, retryAt: at + 40_000 * k }))
    for (let i = 0; i < 6; i++) send(() => ok)
    send((at) => ({ kind: 'throttled', status: 429, retryAt: at + 50_000 * k }))
    for (let i = 0; i < 3; i++) send(() => ok)
    return out
  }

  it.each([10, 60])('k = %s: the same Retry-After script with every time × k, every wait × k', (k) => {
    const base = lumpWaits(1)
    // The lane waits for each named lump, then spends it as the answers come (no share spacing).
    expect(base.filter((w) => w > 30_000).length).toBe(2)
    expect(base.slice(12, 17)).toEqual([0, 0, 0, 0, 0])
    // The 20 ms round trip is not scaled: within it (read on the k = 1 clock) and 1%.
    lumpWaits(k).forEach((w, i) => expect(Math.abs(w - base[i]!)).toBeLessThanOrEqual(0.01 * base[i]! + 25))
  })
})
