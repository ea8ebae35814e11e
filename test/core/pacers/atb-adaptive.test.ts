// atb-adaptive.ts: the steady lane (a failed probe on a continuous quota that says "Retry-After: 1",
// faster growth once the long plateau has run out) and the lump plateau (a long Retry-After).
import { describe, expect, it } from 'vitest'
import type { Pacer, Signal } from '../../../src/core/types.js'
import { cutLane, sendUntilRate, traffic } from './pacer-traffic.js'
import { tunedAtb } from './tuned-atb.js'

const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }
const T0 = 1_700_000_000_000
/**
 * A busy lane sends 10/s for 40 s before its first 429: the paper's quota lasts that long at k = 1
 * (a quota drained in under 30 s by a lane alone reads as a faster one, atb-time-scale.ts).
 */
const BUSY_SENDS = 400
const make = (options = {}): Pacer => tunedAtb(options).create({ now: T0, random: () => 0.5 })

/** A 429 at `now`, carrying a Retry-After of `retryAfterMs` (none when undefined). */
function reject(pacer: Pacer, now: number, retryAfterMs?: number): void {
  pacer.onSend(now, 1)
  pacer.onResult(now, retryAfterMs === undefined ? throttled : { ...throttled, retryAt: now + retryAfterMs })
}

/** Send each time the lane allows, every send admitted, until `until`; returns the time of the last send. */
function sendUntil(pacer: Pacer, from: number, until: number): number {
  let t = from
  while (true) {
    const next = t + Math.max(1, pacer.delayMs(t, 1))
    if (next >= until) return t
    t = next
    pacer.onSend(t, 1)
    pacer.onResult(t, ok)
  }
}

/**
 * A busy lane (10/s for 40 s) cut by a 429, then paced with every send admitted for
 * `probeMs`, then refused again at its next send. Returns the rate after each 429.
 */
function probeFails(options: object, retryAfterMs: number | undefined, probeMs = 20_000): { first: number; second: number } {
  const pacer = make(options)
  let now = traffic(pacer, T0, BUSY_SENDS, 100)
  reject(pacer, now, retryAfterMs)
  const first = pacer.ratePerSecond
  now = sendUntil(pacer, now, now + probeMs)
  now += Math.max(1, pacer.delayMs(now, 1))
  reject(pacer, now, retryAfterMs)
  return { first, second: pacer.ratePerSecond }
}

describe('atb on a continuous quota that says "Retry-After: 1"', () => {
  const PLAIN_CUT = { steadyProbeCutFactor: 1 }
  const PLAIN_GROWTH = { steadyGrowthDoublingMs: 0 }

  it('cuts a busy lane deeper when its probe fails (a 429 after successes since its last cut)', () => {
    const deep = probeFails({}, 1000)
    const plain = probeFails(PLAIN_CUT, 1000)
    expect(deep.first).toBe(plain.first) // the first cut is the usual one
    expect(deep.second).toBeCloseTo(plain.second * 0.3, 9)
    expect(deep.second).toBeLessThan(deep.first)
  })

  it('keeps the plain cut when a retry fails before any success (the same dry spell)', () => {
    const rates = (options: object): number[] => {
      const pacer = make(options)
      const now = traffic(pacer, T0, BUSY_SENDS, 100)
      reject(pacer, now, 1000)
      reject(pacer, now + 1000, 1000) // the retry, at the server's time: refused again
      return [pacer.ratePerSecond]
    }
    expect(rates({})).toEqual(rates(PLAIN_CUT))
  })

  it('keeps the plain cut for a long Retry-After (a stepped quota) and for a bare 429', () => {
    for (const retryAfterMs of [30_000, undefined]) {
      expect(probeFails({}, retryAfterMs)).toEqual(probeFails(PLAIN_CUT, retryAfterMs))
    }
  })

  it('lets a busy lane climb faster once its long plateau ran out: growth doubles every 45 s', () => {
    const rateAt = (options: object, afterCutMs: number): number => {
      const pacer = make(options)
      const now = traffic(pacer, T0, BUSY_SENDS, 100)
      reject(pacer, now, 1000)
      sendUntil(pacer, now, now + afterCutMs)
      return pacer.ratePerSecond
    }
    // Within the 140 s plateau nothing changes.
    expect(rateAt({}, 130_000)).toBe(rateAt(PLAIN_GROWTH, 130_000))
    // 90 s past it: ∫ 0.02·2^(t/45 s) dt ≈ 3.9 against 0.02·90 = 1.8 at constant growth.
    const doubled = rateAt({}, 230_000)
    const plain = rateAt(PLAIN_GROWTH, 230_000)
    expect(doubled).toBeGreaterThan(plain * Math.exp(1.5))
    expect(doubled).toBeLessThan(plain * Math.exp(2.5))
  })

  it('keeps the constant growth for a lane too light to carry a backlog (under 10 admissions in 2 min)', () => {
    const rateAt = (options: object): number => {
      const pacer = make(options)
      const now = traffic(pacer, T0, 10, 10_000) // 0.1/s: paced at about 0.035/s after the cut
      reject(pacer, now, 1000)
      sendUntil(pacer, now, now + 200_000)
      return pacer.ratePerSecond
    }
    expect(rateAt({})).toBe(rateAt(PLAIN_GROWTH))
  })

  it('changes nothing for status-only feedback or a stepped quota\'s long Retry-After', () => {
    for (const retryAfterMs of [undefined, 30_000]) {
      const lane = (options: object): number => {
        const pacer = make(options)
        let now = traffic(pacer, T0, BUSY_SENDS, 100)
        reject(pacer, now, retryAfterMs)
        now = sendUntil(pacer, now, now + 60_000)
        reject(pacer, now + Math.max(1, pacer.delayMs(now, 1)), retryAfterMs)
        sendUntil(pacer, now + 10_000, now + 260_000)
        return pacer.ratePerSecond
      }
      expect(lane({})).toBe(lane({ ...PLAIN_CUT, ...PLAIN_GROWTH }))
    }
  })
})

const OFF = { lumpPlateauMs: 30_000 } // no longer than the plain plateau: the rule is off

/** A lane that got 10/s through for 10 s, then met a 429 carrying `retryAfterMs` (none: status only). */
const lumpCutLane = (options: object, retryAfterMs?: number): { pacer: Pacer; now: number } => cutLane(options, T0, 100, 100, retryAfterMs)

describe('atb: lump plateau (a 429 with a long Retry-After: a quota refilled in steps)', () => {
  it('holds the cut rate for 60 s after a long Retry-After, then grows at full speed', () => {
    // A stepped bucket's Retry-After runs to its next step: the lane is shut for 30 s, then
    // sends at the rate it was cut to, its share of one step.
    const { pacer, now } = lumpCutLane({}, 30_000)
    const rate = pacer.ratePerSecond
    // 25 s past the gate (55 s after the 429): still at a tenth of the growth.
    expect(sendUntilRate(pacer, now, now + 55_000)).toBeLessThan(rate * Math.exp(0.002 * 60))
    // With the rule off, the plain 30 s plateau ran out behind the gate: full growth since.
    const plain = lumpCutLane(OFF, 30_000)
    expect(plain.pacer.ratePerSecond).toBe(rate)
    expect(sendUntilRate(plain.pacer, plain.now, plain.now + 55_000)).toBeGreaterThan(rate * Math.exp(0.02 * 20))
    // Past 60 s the lane probes at full speed again.
    const before = pacer.ratePerSecond
    expect(sendUntilRate(pacer, now + 55_000, now + 95_000)).toBeGreaterThan(before * Math.exp(0.02 * 30))
  })

  it('leaves a short Retry-After (continuous quota) and a bare 429 to their own rules', () => {
    for (const retryAfterMs of [1000, 2000, undefined]) {
      const lane = lumpCutLane({}, retryAfterMs)
      const plain = lumpCutLane(OFF, retryAfterMs)
      expect(lane.pacer.ratePerSecond).toBe(plain.pacer.ratePerSecond)
      expect(sendUntilRate(lane.pacer, lane.now, lane.now + 150_000)).toBe(sendUntilRate(plain.pacer, plain.now, plain.now + 150_000))
    }
  })

  it('ignores a Retry-After already in the past', () => {
    const lane = lumpCutLane({}, -5000)
    const plain = lumpCutLane(OFF, -5000)
    expect(sendUntilRate(lane.pacer, lane.now, lane.now + 90_000)).toBe(sendUntilRate(plain.pacer, plain.now, plain.now + 90_000))
  })
})
