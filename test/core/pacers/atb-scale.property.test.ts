// Property: a lane that reads an announced quota (RateLimit-Policy) decides the same way at every
// time scale. The same Signals with every time multiplied by k — send times, resets, Retry-After,
// the policy's window — give every wait multiplied by k (within the pacer's whole-millisecond
// rounding), for k from 0.01 to 100. The listed exemptions: resets within the headers' one-second
// resolution, so the scripts keep every reset at least a second away at both scales; and the
// clock's resolution, so no attempt is asked for within float noise of the instant a gate opens.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { atb } from '../../../src/core/pacers/atb.js'
import type { Signal } from '../../../src/core/types.js'

/**
 * Not pinned: every run draws its own seed (fast-check's default), so CI keeps trying new scripts.
 * Before unpinning, seeds 1–500 and the formerly pinned 20 261 201 passed every property here. A
 * failure prints its seed and path; PROPERTY_SEED=<seed> replays it.
 */
const SEED = process.env.PROPERTY_SEED === undefined ? {} : { seed: Number(process.env.PROPERTY_SEED) }

// Small epoch times keep sub-millisecond precision at every scale (1.7e12 ms carries only 2e-4 ms).
const T0 = 1_000_000
const QUOTA = 100
/** The smaller of the two scales runs on this window: every reset is then ≥ 1 s away. */
const BASE_WINDOW_MS = 75_000
/**
 * How long after its gate opens each attempt is sent, or before it opens a probe asks (at the
 * first scale): exactly at it, the two scales compare "now" with the gate's time by float noise
 * and may fall either side (the clock's resolution: no real send is timed to a float's last bit).
 */
const GATE_LAG_MS = 0.25

interface Step {
  /** Time since the previous step, as a fraction of the window. */
  gap: number
  /** Units left after this attempt (whole units, at most QUOTA − 2: a reset ≥ 1.5 s away). */
  remaining: number
  /** Refused (only with nothing left: a 429 the quota explains). */
  refused: boolean
  /** Ask for the next unit again this far into the wait (a fraction of it, up to GATE_LAG_MS before its end). */
  probe: number
}

const step: fc.Arbitrary<Step> = fc.record({
  gap: fc.double({ min: 0, max: 0.5, noNaN: true }),
  remaining: fc.integer({ min: 0, max: QUOTA - 2 }),
  refused: fc.boolean(),
  probe: fc.double({ min: 0, max: 1, noNaN: true }),
})

/**
 * Two pacers fed the same script, the second with every time × k, on a window of `windowMs` (and
 * `windowMs` × k). The second pacer's times are the first's × k exactly (not its own rounded
 * waits): a script that lands on a threshold (four gated waits of 1/100 window are the 0.04 window
 * the fleet's spending needs) then lands on it at both scales, and only the decisions are
 * compared. Returns each wait of the first and of the second.
 */
function quotaWaits(steps: Step[], windowMs: number, k: number): [number[], number[]] {
  const pacers = [atb().create({ now: T0, random: () => 0.5 }), atb().create({ now: T0, random: () => 0.5 })]
  const perMs = QUOTA / windowMs
  const policies = [[{ name: 'default', quota: QUOTA, windowMs }], [{ name: 'default', quota: QUOTA, windowMs: windowMs * k }]]
  const out: [number[], number[]] = [[], []]
  const at = (i: number, ms: number): number => T0 + (i === 0 ? ms : ms * k)
  const ask = (ms: number): number => {
    const waits = pacers.map((p, i) => p.delayMs(at(i, ms), 1))
    out[0].push(waits[0]!)
    out[1].push(waits[1]!)
    return waits[0]!
  }
  let elapsed = 0
  for (const s of steps) {
    elapsed += s.gap * windowMs
    const wait = ask(elapsed)
    ask(elapsed + s.probe * Math.max(0, wait - GATE_LAG_MS))
    elapsed += wait
    const refused = s.refused && s.remaining === 0
    pacers.forEach((pacer, i) => {
      const now = at(i, elapsed)
      pacer.onSend(now, 1)
      // A continuous bucket: its reset is the time to refill what is missing.
      const signal: Signal = {
        kind: refused ? 'throttled' : 'ok',
        status: refused ? 429 : 200,
        remaining: s.remaining,
        resetAt: at(i, elapsed + (QUOTA - s.remaining) / perMs),
        policies: policies[i],
        ...(refused ? { retryAt: at(i, elapsed + 1 / perMs) } : {}),
      }
      pacer.onResult(now, signal)
      if (refused) out[i]!.push(pacer.retryDelayMs!(now, 1, signal))
    })
  }
  return out
}

describe('atb with an announced quota is scale-free', () => {
  it('multiplies every wait by k when every time is multiplied by k (k in [0.01, 100])', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), fc.double({ min: 0.01, max: 100, noNaN: true }), (steps, k) => {
        const [a, b] = quotaWaits(steps, BASE_WINDOW_MS * Math.max(1, 1 / k), k)
        expect(b).toHaveLength(a.length)
        for (let i = 0; i < a.length; i++) {
          // delayMs rounds up to whole ms at each scale; nothing carries (the times are exact).
          const slack = 1 + k + 1e-9 * a[i]! * k
          expect(Math.abs(b[i]! - k * a[i]!)).toBeLessThanOrEqual(slack)
        }
      }),
      { numRuns: 300, ...SEED },
    )
  })
})

// Status-only and Retry-After lanes announce no window: the lane's time scale is how long the
// quota lasted before its first 429 (atb-time-scale.ts). Outside the band that drain spans at
// k = 1 (a slower or a faster quota) the lane is scale-free: the same script with every time × k
// gives every wait × k. The exemptions: a drain within the band (the k = 1 pacer, as measured), a
// short drain of a burst (its first 429 with another attempt in flight), a lane that met its
// first 429 with fewer than two admissions (the never-admitted doubling), a long Retry-After (a
// quota that comes back in lumps is never stretched) and, on a faster scale, a Retry-After of up
// to 2 s (whole seconds: a continuous bucket's answer however fast it refills).

interface LaneStep {
  /** Time since the previous step, as a fraction of the drain. */
  gap: number
  throttled: boolean
  /** With `retryAfter`: the Retry-After of a 429, as a fraction of the drain. */
  retryAfter: number
  probe: number
}

const laneStep: fc.Arbitrary<LaneStep> = fc.record({
  gap: fc.double({ min: 0, max: 0.5, noNaN: true }),
  throttled: fc.boolean(),
  // Not within a rounding error of the 429 itself, where "now" and "retryAt" compare by float noise.
  retryAfter: fc.double({ min: 0.01, max: 1, noNaN: true }),
  probe: fc.double({ min: 0, max: 1, noNaN: true }),
})

/**
 * Two pacers fed the same script, the second with every time × k: four admissions over the
 * drain (the first just after the pacer's creation; a short drain counts from four), the first 429 at `drainMs`, then the steps, one attempt in flight at a time.
 * `retryAfterMaxMs` > 0 puts a Retry-After of up to that on every 429. The second pacer's times
 * are the first's × k exactly (not its own rounded waits), so only the decisions are compared.
 * Returns each wait of the first and of the second.
 */
function laneWaits(steps: LaneStep[], drainMs: number, retryAfterMaxMs: number, k: number, quotaPerSecond?: number): [number[], number[]] {
  // Told the quota's rate (quotaPerSecond), the second pacer is told that rate ÷ k.
  const told = (divisor: number) => (quotaPerSecond === undefined ? {} : { quotaPerSecond: quotaPerSecond / divisor })
  const pacers = [atb(told(1)).create({ now: T0, random: () => 0.5 }), atb(told(k)).create({ now: T0, random: () => 0.5 })]
  const out: [number[], number[]] = [[], []]
  let elapsed = 0
  const at = (i: number, ms: number): number => T0 + (i === 0 ? ms : ms * k)
  const ask = (extraMs: number): number => {
    const waits = pacers.map((p, i) => p.delayMs(at(i, elapsed + extraMs), 1))
    out[0].push(waits[0]!)
    out[1].push(waits[1]!)
    return waits[0]!
  }
  const attempt = (throttled: boolean, retryAfterMs: number): void => {
    // Sent a quarter millisecond after the gate opens, as any real send is: exactly at it, the
    // two scales compare "now" with the gate's time by float noise and may fall either side.
    elapsed += ask(0) + GATE_LAG_MS
    pacers.forEach((pacer, i) => {
      const now = at(i, elapsed)
      pacer.onSend(now, 1)
      const signal: Signal = throttled
        ? { kind: 'throttled', status: 429, ...(retryAfterMaxMs > 0 ? { retryAt: at(i, elapsed + retryAfterMs) } : {}) }
        : { kind: 'ok', status: 200 }
      pacer.onResult(now, signal)
      if (throttled) out[i]!.push(pacer.retryDelayMs!(now, 2, signal))
    })
  }
  // Not at the pacer's creation: a window that starts there would include or drop that admission
  // by float rounding alone.
  for (const start of [0.05, 0.3, 0.6, 0.8]) {
    elapsed = Math.max(elapsed, start * drainMs)
    attempt(false, 0)
  }
  elapsed = Math.max(elapsed, drainMs)
  attempt(true, 0.01 * retryAfterMaxMs)
  for (const s of steps) {
    elapsed += s.gap * drainMs
    const wait = pacers[0]!.delayMs(at(0, elapsed), 1)
    ask(s.probe * wait)
    attempt(s.throttled, s.retryAfter * retryAfterMaxMs)
  }
  return out
}

function expectScaled([a, b]: [number[], number[]], k: number): void {
  expect(b).toHaveLength(a.length)
  for (let i = 0; i < a.length; i++) {
    // delayMs rounds up to whole milliseconds at each scale, and the rounding of earlier waits
    // carries into later ones (the output index bounds their number).
    const slack = (2 + i) * (1 + k) + 1e-9 * a[i]! * k
    expect(Math.abs(b[i]! - k * a[i]!)).toBeLessThanOrEqual(slack)
  }
}

describe('atb without an announced window is scale-free beyond the k = 1 band', () => {
  const k = fc.double({ min: 0.01, max: 100, noNaN: true })
  const steps = fc.array(laneStep, { minLength: 1, maxLength: 30 })
  /** A drain above the band (a slower quota than the paper's) at both scales. */
  const slowDrainMs = 400_000
  /** A drain below the band (a faster quota than the paper's) at both scales. */
  const fastDrainMs = 20_000

  it('status-only: a faster quota (drain below the band) multiplies every wait by k', () => {
    fc.assert(
      fc.property(steps, k, (s, k) => {
        const base = fastDrainMs * Math.min(1, 1 / k)
        expectScaled(laneWaits(s, base, 0, k), k)
      }),
      { numRuns: 200, ...SEED },
    )
  })

  it('Retry-After: a faster continuous quota (Retry-Afters within whole seconds) multiplies every wait by k', () => {
    fc.assert(
      fc.property(steps, k, (s, k) => {
        // At most a second at either scale: the answer of a continuous bucket (whole seconds).
        const base = fastDrainMs * Math.min(1, 1 / k)
        expectScaled(laneWaits(s, base, Math.min(1_000, 1_000 / k), k), k)
      }),
      { numRuns: 200, ...SEED },
    )
  })

  it('status-only: a slower quota (drain above the band) multiplies every wait by k', () => {
    fc.assert(
      fc.property(steps, k, (s, k) => {
        const base = slowDrainMs * Math.max(1, 1 / k)
        expectScaled(laneWaits(s, base, 0, k), k)
      }),
      { numRuns: 200, ...SEED },
    )
  })

  it('Retry-After: a slower continuous quota (short Retry-Afters) multiplies every wait by k', () => {
    fc.assert(
      fc.property(steps, k, (s, k) => {
        // Short on the lane's scale: at most 2 s × (drain ÷ 120 s), a continuous bucket's answer.
        const slow = slowDrainMs * Math.max(1, 1 / k)
        expectScaled(laneWaits(s, slow, slow / 60_000, k), k)
      }),
      { numRuns: 200, ...SEED },
    )
  })
})

// Told its quota's rate (`quotaPerSecond`), a lane runs on that rate's scale at every drain, the
// k = 1 band's included: the same script with every time × k and the rate ÷ k gives every wait × k.
describe('atb told its quota rate is scale-free at every drain', () => {
  const k = fc.double({ min: 0.01, max: 100, noNaN: true })
  const steps = fc.array(laneStep, { minLength: 1, maxLength: 30 })
  const drain = fc.double({ min: 5_000, max: 500_000, noNaN: true })
  const rate = fc.double({ min: 0.05, max: 50, noNaN: true })

  it('status-only: multiplies every wait by k', () => {
    fc.assert(
      fc.property(steps, k, drain, rate, (s, k, drainMs, perSecond) => {
        expectScaled(laneWaits(s, drainMs, 0, k, perSecond), k)
      }),
      { numRuns: 200, ...SEED },
    )
  })

  it('is what decides: the same script on a measured lane differs where the drain is in the band', () => {
    // A 60 s drain is within the k = 1 band at one scale and far below it at k = 0.01: measured,
    // the two lanes decide differently; told the rate, alike (the property above).
    const script: LaneStep[] = Array.from({ length: 12 }, (_, i) => ({ gap: 0.02, throttled: i % 3 === 0, retryAfter: 0.5, probe: 0.5 }))
    const measured = laneWaits(script, 60_000, 0, 0.01)
    const drift = measured[0].some((a, i) => Math.abs(measured[1][i]! - 0.01 * a) > (2 + i) * 1.01 + 1e-11 * a)
    expect(drift).toBe(true)
    expectScaled(laneWaits(script, 60_000, 0, 0.01, 100 / 75), 0.01)
  })
})

describe('a cold start runs on the lane\'s time scale', () => {
  /** A lane admitted once, then refused: no evidence to measure a share from. Its wait after the 429. */
  const coldWait = (options: object, k: number): number => {
    const pacer = atb(options).create({ now: T0, random: () => 0.5 })
    pacer.onSend(T0 + 1_000 * k, 1)
    pacer.onResult(T0 + 1_020 * k, { kind: 'ok', status: 200 })
    pacer.onSend(T0 + 5_000 * k, 1)
    pacer.onResult(T0 + 5_020 * k, { kind: 'throttled', status: 429 })
    const now = T0 + 5_020 * k
    return Math.max(pacer.delayMs(now, 1), pacer.retryDelayMs!(now, 1, { kind: 'throttled', status: 429 }))
  }

  it('told the quota rate, waits k times longer on a quota k times slower', () => {
    const paper = coldWait({ quotaPerSecond: 80 / 60 }, 1)
    expect(paper).toBeGreaterThan(0)
    for (const k of [0.1, 10, 60]) expect(Math.abs(coldWait({ quotaPerSecond: 80 / 60 / k }, k) - k * paper)).toBeLessThanOrEqual(1 + k)
  })

  it('knowing no scale (a drain within the k = 1 band), keeps UB\'s first step in absolute time', () => {
    // A 4 s drain with one admission: too short and too thin to read a scale from at either k.
    expect(coldWait({}, 0.5)).toBe(coldWait({}, 2))
  })
})
