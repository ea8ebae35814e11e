import { describe, expect, it } from 'vitest'
import { atb, paperAtb } from '../../../src/core/pacers/atb.js'
import type { Pacer, Signal } from '../../../src/core/types.js'
import { answered, cutLane as cutLaneAt, PAPER_SCALE, sendUntilRate, traffic } from './pacer-traffic.js'
import { tunedAtb } from './tuned-atb.js'

const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
const T0 = 1_700_000_000_000
const make = (options = {}): Pacer => tunedAtb({ ...PAPER_SCALE, ...options }).create({ now: T0, random: () => 0.5 })

/** A lane that got 10/s through for 10 s, then met its first 429. */
function congestedLane(options = {}): { pacer: Pacer; now: number } {
  const pacer = make(options)
  const now = traffic(pacer, T0, 100, 100)
  pacer.onSend(now, 1)
  pacer.onResult(now, throttled)
  return { pacer, now }
}

describe('atb (polite-fetch default)', () => {
  it('costs nothing until something is wrong', () => {
    const pacer = make()
    for (let i = 0; i < 500; i++) {
      expect(pacer.delayMs(T0 + i, 1)).toBe(0)
      pacer.onSend(T0 + i, 1)
    }
    for (let i = 0; i < 500; i++) pacer.onResult(T0 + 500 + i, ok)
    expect(pacer.delayMs(T0 + 1000, 1)).toBe(0)
    expect(pacer.ratePerSecond).toBe(Infinity)
    expect(pacer.tokens(T0 + 1000)).toBe(Infinity)
  })

  it('gates the whole lane until Retry-After, to the millisecond', () => {
    const { pacer, now } = congestedLane()
    pacer.onResult(now + 10, { ...throttled, retryAt: now + 5000.4 })
    expect(pacer.delayMs(now + 10, 1)).toBe(4991)
    expect(pacer.delayMs(now + 5000, 1)).toBe(1)
    // Every concurrent caller asks the same pure question and gets the same gate.
    expect(pacer.delayMs(now + 5000, 5)).toBe(1)
    expect(pacer.delayMs(now + 5001, 1)).toBe(0)
    expect(pacer.retryDelayMs!(now + 10, 1, { ...throttled, retryAt: now + 5000 })).toBe(4990)
  })

  it('honours Retry-After even before any congestion was inferred (e.g. on a 200)', () => {
    const pacer = make()
    pacer.onResult(T0, { ...ok, retryAt: T0 + 2000 })
    expect(pacer.delayMs(T0, 1)).toBe(2000)
    expect(pacer.delayMs(T0 + 2000, 1)).toBe(0)
    const deaf = make({ honourRetryAfter: false })
    deaf.onResult(T0, { ...ok, retryAt: T0 + 2000 })
    expect(deaf.delayMs(T0, 1)).toBe(0)
  })

  it('ignores a Retry-After that is absurdly far away or not a number', () => {
    const pacer = make()
    pacer.onResult(T0, { ...ok, retryAt: T0 + 10 * 86_400_000 })
    pacer.onResult(T0, { ...ok, retryAt: Number.NaN })
    expect(pacer.delayMs(T0, 1)).toBe(0)
  })

  it('spreads what remains when the current pace would exhaust it before the reset', () => {
    const pacer = make()
    const now = traffic(pacer, T0, 20, 500) // 2/s over the last 10 s
    pacer.onResult(now, { ...ok, remaining: 10, resetAt: now + 60_000 })
    // 2/s · 60 s = 120 > 10: one unit every 60 s / 10 = 6 s after the last send.
    const lastSend = now - 500
    expect(pacer.delayMs(now, 1)).toBe(lastSend + 6000 - now)
    pacer.onSend(lastSend + 6000, 1) // now 9 left, 54.5 s: 6.06 s apart
    expect(pacer.delayMs(lastSend + 6000, 1)).toBe(Math.ceil(((now + 60_000 - (lastSend + 6000)) / 9)))
  })

  it('does not slow a clean API that has plenty remaining', () => {
    const pacer = make()
    const now = traffic(pacer, T0, 20, 500)
    pacer.onResult(now, { ...ok, remaining: 1000, resetAt: now + 60_000 })
    expect(pacer.delayMs(now, 1)).toBe(0)
  })

  it('gates until the reset when the quota is used up', () => {
    const pacer = make()
    pacer.onResult(T0, { ...ok, remaining: 1, resetAt: T0 + 30_000 })
    expect(pacer.delayMs(T0, 1)).toBe(0)
    pacer.onSend(T0, 1)
    expect(pacer.delayMs(T0, 1)).toBe(30_000)
    pacer.onResult(T0 + 100, { ...ok, remaining: 0, resetAt: T0 + 30_000 })
    expect(pacer.delayMs(T0 + 100, 1)).toBe(29_900)
    expect(pacer.delayMs(T0 + 30_000, 1)).toBe(0)
  })

  describe('with an announced quota policy (RateLimit-Policy)', () => {
    // 100 units per 75 s: a token bucket refilling 4/3 units a second.
    const policy: Pick<Signal, 'policies'> = { policies: [{ name: 'default', quota: 100, windowMs: 75_000 }] }

    it('waits for the next unit at the refill rate, not for the (time-to-full) reset', () => {
      const pacer = make()
      pacer.onResult(T0, { ...ok, remaining: 0, resetAt: T0 + 75_000, ...policy })
      expect(pacer.delayMs(T0, 1)).toBe(750)
    })

    /** Hints 50 then 20 remaining, 10 s apart, while the lane sent 5 units (0.5/s). */
    function sharedLane(lastRemaining: number): Pacer {
      const pacer = make()
      pacer.onResult(T0, { ...ok, remaining: 50, resetAt: T0 + 37_500, ...policy })
      for (let i = 1; i <= 5; i++) answered(pacer, T0 + 2000 * i) // each answered without a hint
      // A continuous bucket: its reset is the time to refill what is missing at 4/3 a second.
      pacer.onResult(T0 + 10_000, { ...ok, remaining: lastRemaining, resetAt: T0 + 10_000 + (100 - lastRemaining) * 750, ...policy })
      return pacer
    }

    it('scales its pace by what the fleet may spend over what it spends, read from remaining', () => {
      // The fleet spent 50 − 20 + 4/3·10 = 43.3 units in 10 s (4.33/s); it may spend 4/3/s
      // plus (20 − 12 reserve) over 30 s = 1.6/s. Our 0.5/s becomes 0.5 · 1.6 / 4.33 = 0.185/s.
      const pacer = sharedLane(20)
      expect(pacer.delayMs(T0 + 10_000, 1)).toBe(5417)
      // The hint ages: 3 s later the others have spent 3 · (4.33 − 0.5 − 4/3) = 7.5 more.
      expect(pacer.delayMs(T0 + 13_000, 1)).toBe(3420)
      // No status-only pacing is involved: the lane has seen no 429.
      expect(pacer.ratePerSecond).toBe(Infinity)
    })

    it('waits beyond a minute for its turn when even the aged hint says nothing is left', () => {
      // 50 → 0 in 10 s while we sent 1: the fleet spends 6.33/s. Once the next unit is due
      // (0.75 s), the aged hint says 0.75 · (4/3 − 6.23) < 0, i.e. still none left (a count never
      // goes below 0), so the fleet may spend 4/3 − 12/30 = 0.93/s and our 0.1/s becomes 0.0147/s:
      // one send every 67.9 s, beyond the 60 s a lane with units left would wait at most.
      const pacer = make()
      pacer.onResult(T0, { ...ok, remaining: 50, resetAt: T0 + 37_500, ...policy })
      pacer.onSend(T0 + 10_000, 1)
      pacer.onResult(T0 + 10_000, { ...ok, remaining: 0, resetAt: T0 + 85_000, ...policy })
      expect(pacer.delayMs(T0 + 10_000, 1)).toBe(750) // first the next unit, at Q
      expect(pacer.delayMs(T0 + 10_750, 1)).toBe(67_858 - 750) // then the lane's turn, 67.9 s after its send
    })

    it('credits no refill between the steps of a quota that does not refill continuously', () => {
      // Same counts, but the resets say the quota comes back in steps (reset far beyond what
      // the missing units need at 4/3 a second): 30 units in 10 s is all the fleet spent.
      const pacer = make()
      pacer.onResult(T0, { ...ok, remaining: 50, resetAt: T0 + 60_000, ...policy })
      for (let i = 1; i <= 5; i++) answered(pacer, T0 + 2000 * i) // each answered without a hint
      pacer.onResult(T0 + 10_000, { ...ok, remaining: 20, resetAt: T0 + 60_000, ...policy })
      // F = 3/s; target 1.6/s: 0.5 · 1.6 / 3 = 0.267/s, one send every 3.75 s.
      expect(pacer.delayMs(T0 + 10_000, 1)).toBe(3750)
    })

    it('pays nothing while the fleet spends within the quota and what is left', () => {
      expect(sharedLane(90).delayMs(T0 + 10_000, 1)).toBe(0)
    })

    it('leaves a 429 an announced quota explains (nothing left) to the quota pacing; one with units left is congestion', () => {
      const explained = make()
      explained.onResult(T0, { kind: 'throttled', status: 429, remaining: 0, resetAt: T0 + 75_000, retryAt: T0 + 1000, ...policy })
      expect(explained.ratePerSecond).toBe(Infinity)
      expect(explained.delayMs(T0, 1)).toBe(1000) // Retry-After, later than the next unit (750 ms)
      const unexplained = make()
      unexplained.onResult(T0, { kind: 'throttled', status: 429, remaining: 40, resetAt: T0 + 45_000, ...policy })
      expect(unexplained.ratePerSecond).toBeLessThan(Infinity)
      // A window or a stepped bucket (its reset is not the missing units over the rate) too:
      // its count and reset say when units come back.
      const windowed = make()
      windowed.onResult(T0, { kind: 'throttled', status: 429, remaining: 0, resetAt: T0 + 111_000, retryAt: T0 + 1000, ...policy })
      expect(windowed.ratePerSecond).toBe(Infinity)
      expect(windowed.delayMs(T0, 1)).toBe(1000)
    })
  })

  it('on the first 429, paces at what got through, at most 0.35 × the attempt rate', () => {
    const { pacer, now } = congestedLane({ jitterFirstCut: false })
    // Last 10 s: 99 admitted + 1 rejected attempts → 10/s attempted.
    expect(pacer.ratePerSecond).toBeCloseTo(0.35 * 10, 9)
    expect(pacer.delayMs(now, 1)).toBe(Math.ceil(1000 / 3.5))
  })

  it('spreads the first paced send of a fleet over one spacing (a uniform draw), then paces evenly', () => {
    const lane = (draw: number) => {
      const pacer = tunedAtb(PAPER_SCALE).create({ now: T0, random: () => draw })
      const now = traffic(pacer, T0, 100, 100)
      pacer.onSend(now, 1)
      pacer.onResult(now, throttled)
      return { pacer, now }
    }
    const early = lane(0.1)
    const late = lane(0.9)
    expect(early.pacer.delayMs(early.now, 1)).toBe(Math.ceil(0.1 * (1000 / 3.5)))
    expect(late.pacer.delayMs(late.now, 1)).toBe(Math.ceil(0.9 * (1000 / 3.5)))
    // Only the first paced send is drawn: the next one is a full spacing after it.
    const at = early.now + early.pacer.delayMs(early.now, 1)
    early.pacer.onSend(at, 1)
    expect(early.pacer.delayMs(at, 1)).toBe(Math.ceil(1000 / 3.5))
  })

  describe('cold start (a 429 before the lane has successes to measure)', () => {
    it('retries at the server\'s Retry-After when nothing suggests contention', () => {
      const pacer = make()
      pacer.onSend(T0, 1)
      const signal: Signal = { ...throttled, retryAt: T0 + 40 }
      pacer.onResult(T0 + 20, signal)
      expect(pacer.delayMs(T0 + 20, 1)).toBe(20) // the gate
      expect(pacer.delayMs(T0 + 40, 1)).toBe(0) // no pacing on top of it
      expect(pacer.retryDelayMs!(T0 + 20, 1, signal)).toBe(20)
    })

    it('paces a bare first 429 of a lane never admitted like UB\'s first step (within a second)', () => {
      const pacer = make() // random() = 0.5: the first paced send waits half a spacing
      pacer.onSend(T0, 1)
      pacer.onResult(T0 + 20, throttled)
      expect(pacer.ratePerSecond).toBe(1)
      expect(pacer.delayMs(T0 + 20, 1)).toBe(500)
      expect(pacer.retryDelayMs!(T0 + 20, 1, throttled)).toBe(0)
    })

    it('doubles its spacing on every further 429 while never admitted, as exponential backoff does', () => {
      const pacer = make()
      let now = T0
      const waits: number[] = []
      for (let i = 0; i < 5; i++) {
        pacer.onSend(now, 1)
        pacer.onResult(now, throttled)
        const wait = pacer.delayMs(now, 1)
        waits.push(wait)
        now += wait
      }
      expect(waits[0]).toBe(500) // half of the first 1 s spacing (random 0.5)
      // 1, 2, 4, 8 s less the little the paced sends in between grew the rate, as any paced send does.
      for (let i = 1; i < waits.length; i++) {
        expect(waits[i]! / (1000 * 2 ** i)).toBeGreaterThan(0.7)
        expect(waits[i]! / (1000 * 2 ** i)).toBeLessThanOrEqual(1)
      }
    })

    it('does not read a rate from a single success either', () => {
      const pacer = make()
      traffic(pacer, T0, 1, 0)
      pacer.onSend(T0 + 100, 1)
      pacer.onResult(T0 + 120, throttled)
      expect(pacer.ratePerSecond).toBe(0.5) // not 1 success / 10 s × 0.35
      expect(pacer.delayMs(T0 + 120, 1)).toBeLessThanOrEqual(2000)
    })

    it('backs off steeply while nothing gets through after an admission, then measures once successes arrive', () => {
      const pacer = make()
      let now = traffic(pacer, T0, 1, 0) // admitted once: its 429s say that others spend the quota
      const rates: number[] = []
      for (let i = 0; i < 3; i++) {
        now += pacer.delayMs(now, 1)
        pacer.onSend(now, 1)
        pacer.onResult(now, throttled)
        rates.push(pacer.ratePerSecond)
      }
      // Each further 429 cuts the rate to 1/8 (the sends in between grew it a little, as any paced send does).
      expect(rates[0]).toBe(0.5)
      for (let i = 1; i < rates.length; i++) {
        expect(rates[i]! / rates[i - 1]!).toBeGreaterThanOrEqual(0.125)
        expect(rates[i]! / rates[i - 1]!).toBeLessThan(0.2)
      }
      expect(pacer.delayMs(now, 1)).toBeGreaterThan(30_000)
      // With successes since congestion began, a later 429 cuts to what got through again.
      const cold = pacer.ratePerSecond
      now = traffic(pacer, now + 60_000, 6, 10_000)
      pacer.onSend(now, 1)
      pacer.onResult(now, throttled)
      // Measured now: min(0.8 × rate, successes per second since congestion began), not another 1/8.
      expect(pacer.ratePerSecond).toBeGreaterThan(cold * 0.5)
    })

    it('paces once a retry at the server\'s time failed too (others compete for it)', () => {
      const pacer = make()
      traffic(pacer, T0 - 1000, 1, 0)
      pacer.onSend(T0, 1)
      pacer.onResult(T0 + 20, { ...throttled, retryAt: T0 + 1000 })
      pacer.onSend(T0 + 1000, 1)
      pacer.onResult(T0 + 1020, { ...throttled, retryAt: T0 + 2000 })
      expect(pacer.ratePerSecond).toBeCloseTo(0.0625, 3)
      expect(pacer.delayMs(T0 + 2000, 1)).toBeGreaterThan(0) // a spacing after the retry, beyond the gate
    })
  })

  describe('burst start (concurrent callers hit their first 429 together)', () => {
    /** 12 attempts sent at once; the quota admits 5 (its capacity), refuses 7. */
    function burst(options = {}): Pacer {
      const pacer = make(options)
      for (let i = 0; i < 12; i++) pacer.onSend(T0, 1)
      for (let i = 0; i < 5; i++) pacer.onResult(T0 + 20, ok)
      for (let i = 0; i < 7; i++) pacer.onResult(T0 + 20, throttled)
      return pacer
    }

    it('starts at the cold-start rate, a whole spacing after the burst, ignoring the burst\'s other 429s', () => {
      const pacer = burst()
      // Not 5 successes / 10 s × 0.35 — the burst measured the capacity, not the rate.
      expect(pacer.ratePerSecond).toBe(0.5)
      expect(pacer.delayMs(T0 + 20, 1)).toBe(2000)
    })

    it('multiplies the rate on every success until a 429, then keeps 0.8 × the last rate that got through', () => {
      const pacer = burst()
      let now = T0 + 20
      const rates: number[] = []
      for (let i = 0; i < 6; i++) {
        now += pacer.delayMs(now, 1)
        pacer.onSend(now, 1)
        pacer.onResult(now + 20, ok)
        rates.push(pacer.ratePerSecond)
      }
      for (let i = 1; i < rates.length; i++) expect(rates[i]! / rates[i - 1]!).toBeCloseTo(1.5, 1)
      const grown = pacer.ratePerSecond // 0.5 × 1.5^6 ≈ 5.7/s
      expect(grown).toBeGreaterThan(5)
      now += pacer.delayMs(now, 1)
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, throttled)
      // (plus the slow time-based growth of the one send in between)
      expect(pacer.ratePerSecond / ((grown / 1.5) * 0.8)).toBeCloseTo(1, 1)
      // Slow start is over: further successes no longer multiply the rate.
      const after = pacer.ratePerSecond
      now += 20 + pacer.delayMs(now + 20, 1)
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, ok)
      expect(pacer.ratePerSecond).toBeLessThan(after * 1.1)
    })

    it('steps at most once per spacing (successes of earlier, slower attempts do not compound)', () => {
      const pacer = burst()
      const now = T0 + 20 + pacer.delayMs(T0 + 20, 1)
      for (let i = 0; i < 4; i++) pacer.onSend(now, 1)
      for (let i = 0; i < 4; i++) pacer.onResult(now + 20, ok)
      expect(pacer.ratePerSecond).toBeCloseTo(0.75, 2) // one step of ×1.5 (plus the time-based growth of the sends)
    })

    it('right after slow start, a further 429 halves the rate instead of reading it off the ramp', () => {
      const pacer = burst()
      let now = T0 + 20
      for (let i = 0; i < 8; i++) {
        now += pacer.delayMs(now, 1)
        pacer.onSend(now, 1)
        pacer.onResult(now + 20, ok)
      }
      now += pacer.delayMs(now, 1)
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, throttled) // slow start ends
      const found = pacer.ratePerSecond
      now += 20 + pacer.delayMs(now + 20, 1)
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, throttled)
      // 9 successes over ~6 s would read as 0.9/s over the 10 s minimum span; half the rate is far more.
      expect(pacer.ratePerSecond / (found * 0.5)).toBeCloseTo(1, 1)
      expect(pacer.ratePerSecond).toBeGreaterThan(2)
    })

    it('halves and keeps starting slowly while the burst\'s capacity is not refilled', () => {
      const pacer = burst()
      const now = T0 + 20 + pacer.delayMs(T0 + 20, 1)
      pacer.onSend(now, 1)
      pacer.onResult(now + 20, throttled)
      expect(pacer.ratePerSecond).toBeCloseTo(0.25, 2)
      const next = now + 20 + pacer.delayMs(now + 20, 1)
      pacer.onSend(next, 1)
      pacer.onResult(next + 20, ok)
      expect(pacer.ratePerSecond).toBeGreaterThan(0.25 * 1.4)
    })

    it('does not apply to a lane with one attempt in flight (sequential callers), nor when turned off', () => {
      const { pacer } = congestedLane()
      expect(pacer.ratePerSecond).toBeCloseTo(3.5, 6) // measured, as before
      const off = burst({ burstStartGrowth: 1 })
      expect(off.ratePerSecond).not.toBe(0.5) // read off the burst, the old way
    })
  })

  it('on a later 429, cuts to the admitted rate, never by more than asked (no blind halving)', () => {
    const { pacer, now } = congestedLane({ growthPerSecond: 0 })
    const rate = pacer.ratePerSecond // 3.5/s
    // 60 s at the lane's pace, all admitted: the admitted rate is the pacing rate.
    let t = now
    while (t < now + 60_000) {
      t += pacer.delayMs(t, 1)
      pacer.onSend(t, 1)
      pacer.onResult(t, ok)
    }
    pacer.onSend(t, 1)
    pacer.onResult(t, throttled)
    expect(pacer.ratePerSecond).toBeCloseTo(rate * 0.8, 9) // min(0.8 × rate, admitted ≈ rate)
  })

  describe('per-request backoff (a request throttled again and again)', () => {
    /** A congested lane that has met `count` 429s in all (the first at `congestedLane`'s end), with successes between. */
    function laneWith429s(count: number, options = {}): { pacer: Pacer; now: number } {
      const { pacer, now } = congestedLane(options)
      let t = traffic(pacer, now + 1000, 5, 1000)
      for (let i = 1; i < count; i++) {
        pacer.onSend(t, 1)
        pacer.onResult(t, throttled)
        t += 1000
      }
      return { pacer, now: t }
    }
    const spacingMs = (pacer: Pacer): number => 1000 / pacer.ratePerSecond

    it('spaces the retries of a request exponentially in lane spacings: (2^(n−1) − 1) × 4 × spacing', () => {
      const { pacer, now } = laneWith429s(2)
      expect(pacer.retryDelayMs!(now, 1, throttled)).toBe(0) // the lane gate alone spaces a first retry
      expect(pacer.retryDelayMs!(now, 2, throttled)).toBeCloseTo(4 * spacingMs(pacer), 6)
      expect(pacer.retryDelayMs!(now, 3, throttled)).toBeCloseTo(12 * spacingMs(pacer), 6)
      expect(pacer.retryDelayMs!(now, 10, throttled)).toBe(60_000) // capped
    })

    it('spaces them harder on a lane that keeps meeting 429s (a stepped quota stays dry until its next step)', () => {
      // 429s in the last 5 min / 2, between 1 and 2: three 429s give ×1.5, four or more ×2.
      const three = laneWith429s(3)
      expect(three.pacer.retryDelayMs!(three.now, 2, throttled)).toBeCloseTo(1.5 * 4 * spacingMs(three.pacer), 6)
      const six = laneWith429s(6)
      expect(six.pacer.retryDelayMs!(six.now, 2, throttled)).toBeCloseTo(2 * 4 * spacingMs(six.pacer), 6)
      // Turned off, the same lane keeps the plain backoff.
      const off = laneWith429s(6, { dryLaneMaxBackoffFactor: 1 })
      expect(off.pacer.retryDelayMs!(off.now, 2, throttled)).toBeCloseTo(4 * spacingMs(off.pacer), 6)
    })

    it('forgets 429s older than dryLaneWindowMs', () => {
      const { pacer, now } = laneWith429s(6)
      // Five minutes of successes later, one new 429: only it is recent.
      const later = traffic(pacer, now, 31, 10_000)
      pacer.onSend(later, 1)
      pacer.onResult(later, throttled)
      expect(pacer.retryDelayMs!(later, 2, throttled)).toBeCloseTo(4 * spacingMs(pacer), 6)
    })
  })

  it('settles near what a status-only server admits, with few 429s', () => {
    // The server admits 1/s (token bucket, capacity 2); the lane always has work.
    const pacer = make()
    let serverTokens = 2
    let serverAt = T0
    const admit = (t: number): boolean => {
      serverTokens = Math.min(2, serverTokens + (t - serverAt) / 1000)
      serverAt = t
      if (serverTokens < 1) return false
      serverTokens -= 1
      return true
    }
    let t = T0
    let rejected = 0
    let attempts = 0
    while (t < T0 + 600_000) {
      t += pacer.delayMs(t, 1)
      pacer.onSend(t, 1)
      const admitted = admit(t)
      if (t > T0 + 300_000) {
        attempts++
        if (!admitted) rejected++
      }
      pacer.onResult(t + 20, admitted ? ok : throttled)
      t += 20
    }
    expect(rejected / attempts).toBeLessThan(0.1)
    expect(attempts / 300).toBeGreaterThan(0.75) // ≥ 75% of what the server offers
    expect(pacer.ratePerSecond).toBeGreaterThan(0.5)
    expect(pacer.ratePerSecond).toBeLessThan(2)
  })

  it('cuts once for a flight of concurrent attempts that all come back 429', () => {
    const { pacer, now } = congestedLane({ growthPerSecond: 0 })
    const rate = pacer.ratePerSecond
    const t = now + 10_000
    for (let i = 0; i < 5; i++) pacer.onSend(t, 1) // the lane allowed a flight (e.g. after a calm spell)
    pacer.onResult(t + 50, throttled)
    const afterFirst = pacer.ratePerSecond
    expect(afterFirst).toBeLessThan(rate)
    for (let i = 0; i < 4; i++) pacer.onResult(t + 60 + i, throttled)
    expect(pacer.ratePerSecond).toBe(afterFirst)
  })

  it('grows with time while the lane uses its rate, not per success', () => {
    const { pacer, now } = congestedLane({ plateauBand: 0 })
    const rate = pacer.ratePerSecond
    for (let i = 0; i < 50; i++) pacer.onResult(now + i, ok)
    expect(pacer.ratePerSecond).toBe(rate)
    // Send each time the lane allows, for ~30 s.
    let t = now
    while (t < now + 30_000) {
      t += pacer.delayMs(t, 1)
      pacer.onSend(t, 1)
      pacer.onResult(t, ok)
    }
    const grown = pacer.ratePerSecond
    expect(grown).toBeGreaterThan(rate * Math.exp(0.02 * 25))
    expect(grown).toBeLessThan(rate * Math.exp(0.02 * 35))
  })

  it('grows slowly near the rate of its last cut, at full speed once the plateau lasted plateauMs', () => {
    const { pacer, now } = congestedLane()
    const rate = pacer.ratePerSecond
    const sendUntil = (from: number, until: number): number => {
      let t = from
      while (t < until) {
        t += pacer.delayMs(t, 1)
        pacer.onSend(t, 1)
        pacer.onResult(t, ok)
      }
      return t
    }
    // The first 20 s: growth at a tenth of 0.02/s (the fleet's capacity has not moved).
    const t = sendUntil(now, now + 20_000)
    expect(pacer.ratePerSecond).toBeGreaterThan(rate)
    expect(pacer.ratePerSecond).toBeLessThan(rate * Math.exp(0.002 * 25))
    // From 30 s after the 429 on, full speed again: 30 s more give well over e^(0.02·25).
    sendUntil(t, now + 60_000)
    expect(pacer.ratePerSecond).toBeGreaterThan(rate * Math.exp(0.002 * 30 + 0.02 * 25))
  })

  describe('steady plateau (a 429 with a short Retry-After: a continuous quota, empty now)', () => {
    const cutLane = (options: object, count: number, everyMs: number, retryAfterMs?: number): { pacer: Pacer; now: number } =>
      cutLaneAt(options, T0, count, everyMs, retryAfterMs)
    const sendUntil = sendUntilRate
    const OFF = { steadyPlateauMs: 30_000 }

    it('keeps a busy lane on its plateau for 140 s, then grows at full speed', () => {
      const { pacer, now } = cutLane({}, 100, 100, 1000)
      const rate = pacer.ratePerSecond
      // 100 s after the 429: still at a tenth of the growth (the plain plateau ended at 30 s).
      expect(sendUntil(pacer, now, now + 100_000)).toBeLessThan(rate * Math.exp(0.002 * 105))
      const plain = cutLane(OFF, 100, 100, 1000)
      expect(sendUntil(plain.pacer, plain.now, plain.now + 100_000)).toBeGreaterThan(rate * Math.exp(0.002 * 30 + 0.02 * 60))
      // Past 140 s the capacity may have freed up (others finished): full speed again.
      expect(sendUntil(pacer, now + 100_000, now + 200_000)).toBeGreaterThan(rate * Math.exp(0.002 * 140 + 0.02 * 50))
    })

    it('keeps the non-steady plateau for a long Retry-After, none, or a light lane', () => {
      const cases: Array<[number, number, number | undefined]> = [
        [100, 100, 30_000], // a stepped quota: empty until its next step, then plenty
        [100, 100, undefined], // status only
        [3, 50_000, 1000], // a light lane: a few requests, far apart
      ]
      for (const [count, everyMs, retryAfterMs] of cases) {
        const lane = cutLane({}, count, everyMs, retryAfterMs)
        const plain = cutLane(OFF, count, everyMs, retryAfterMs)
        expect(lane.pacer.ratePerSecond).toBe(plain.pacer.ratePerSecond)
        expect(sendUntil(lane.pacer, lane.now, lane.now + 150_000)).toBe(sendUntil(plain.pacer, plain.now, plain.now + 150_000))
      }
    })
  })

  it('does not burst after a quiet spell (unlike the paper\'s ATB)', () => {
    const { pacer, now } = congestedLane()
    const rate = pacer.ratePerSecond
    const later = now + 5 * 60_000 // quiet for 5 min, still within calmAfterMs
    expect(pacer.delayMs(later, 1)).toBe(0)
    pacer.onSend(later, 1)
    expect(pacer.delayMs(later, 1)).toBeGreaterThan(0)
    expect(pacer.ratePerSecond).toBeLessThanOrEqual(rate)

    const paper = paperAtb().create({ now: T0, random: () => 0.5 })
    for (let i = 0; i < 20; i++) paper.onResult(T0 + i, ok) // ×1.2 per success: 0.67 → ~25/s
    let burst = 0
    while (paper.delayMs(later, 1) === 0 && burst < 100) {
      paper.onSend(later, 1)
      burst++
    }
    expect(burst).toBe(40)
  })

  it('counts cost in units: a costly attempt is paid off before the next', () => {
    const { pacer, now } = congestedLane({ growthPerSecond: 0 })
    const rate = pacer.ratePerSecond
    const t = now + 10_000 // bucket full (1 unit)
    expect(pacer.delayMs(t, 3)).toBe(0)
    pacer.onSend(t, 3)
    // 1 − 3 = −2 units: the next unit is due in 3 units' time.
    expect(pacer.delayMs(t, 1)).toBe(Math.ceil((3 / rate) * 1000))
  })

  it('stops pacing after calmAfterMs without congestion', () => {
    const { pacer, now } = congestedLane()
    pacer.onSend(now + 1, 1)
    expect(pacer.delayMs(now + 2, 1)).toBeGreaterThan(0)
    expect(pacer.delayMs(now + 600_000, 1)).toBe(0)
    pacer.onSend(now + 600_000, 1)
    expect(pacer.ratePerSecond).toBe(Infinity)
  })

  it('round-trips its state through JSON', () => {
    const { pacer, now } = congestedLane()
    pacer.onResult(now + 5, { ...ok, remaining: 3, resetAt: now + 60_000 })
    const state = JSON.parse(JSON.stringify(pacer.toJSON(now + 10)))
    const resumed = atb().create({ now: now + 20, random: () => 0.5, state })
    expect(resumed.ratePerSecond).toBeCloseTo(pacer.ratePerSecond, 12)
    expect(resumed.delayMs(now + 20, 1)).toBe(pacer.delayMs(now + 20, 1))
    const gated = make()
    gated.onResult(T0, { ...throttled, retryAt: T0 + 9000 })
    const gatedState = JSON.parse(JSON.stringify(gated.toJSON(T0)))
    expect(atb().create({ now: T0 + 1000, random: () => 0.5, state: gatedState }).delayMs(T0 + 1000, 1)).toBe(8000)
  })

  it('starts fresh from state saved in the future or holding absurd values', () => {
    const { pacer, now } = congestedLane()
    const state = JSON.parse(JSON.stringify(pacer.toJSON(now)))
    const fresh = (s: object) => atb().create({ now, random: () => 0.5, state: s as never })
    for (const bad of [
      { ...state, savedAt: now + 3_600_000 },
      { ...state, lastCongestionAt: now + 3_600_000 },
      { ...state, tokens: -1e9 },
      { ...state, rate: 0 },
      { ...state, rate: 'fast' },
      { ...state, retryAt: now + 365 * 86_400_000 },
      { ...state, log: [[now + 1e9, 1]] },
      { ...state, version: 99 },
      { ...state, kind: 'exponential' },
    ]) {
      const p = fresh(bad)
      expect(p.delayMs(now, 1)).toBe(0)
      expect(p.ratePerSecond).toBe(Infinity)
    }
  })
})
