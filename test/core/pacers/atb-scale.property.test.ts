// Property: a lane that reads an announced quota (RateLimit-Policy) decides the same way at every
// time scale. The same Signals with every time multiplied by k — send times, resets, Retry-After,
// the policy's window — give every wait multiplied by k (within the pacer's whole-millisecond
// rounding), for k from 0.01 to 100. The listed exemption: resets within the headers' one-second
// resolution, so the scripts keep every reset at least a second away at both scales.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { atb } from '../../../src/core/pacers/atb.js'
import type { Signal } from '../../../src/core/types.js'

// Small epoch times keep sub-millisecond precision at every scale (1.7e12 ms carries only 2e-4 ms).
const T0 = 1_000_000
const QUOTA = 100
/** The smaller of the two scales runs on this window: every reset is then ≥ 1 s away. */
const BASE_WINDOW_MS = 75_000

interface Step {
  /** Time since the previous step, as a fraction of the window. */
  gap: number
  /** Units left after this attempt (whole units, at most QUOTA − 2: a reset ≥ 1.5 s away). */
  remaining: number
  /** Refused (only with nothing left: a 429 the quota explains). */
  refused: boolean
  /** Ask for the next unit again this far into the wait (a fraction of it). */
  probe: number
}

const step: fc.Arbitrary<Step> = fc.record({
  gap: fc.double({ min: 0, max: 0.5, noNaN: true }),
  remaining: fc.integer({ min: 0, max: QUOTA - 2 }),
  refused: fc.boolean(),
  probe: fc.double({ min: 0, max: 1, noNaN: true }),
})

/** Every wait the pacer asks for along the script, on a window of `windowMs`. */
function waits(steps: Step[], windowMs: number): number[] {
  const pacer = atb().create({ now: T0, random: () => 0.5 })
  const perMs = QUOTA / windowMs
  const policies = [{ name: 'default', quota: QUOTA, windowMs }]
  const out: number[] = []
  let now = T0
  for (const s of steps) {
    now += s.gap * windowMs
    const wait = pacer.delayMs(now, 1)
    out.push(wait, pacer.delayMs(now + s.probe * wait, 1))
    now += wait
    pacer.onSend(now, 1)
    const refused = s.refused && s.remaining === 0
    // A continuous bucket: its reset is the time to refill what is missing.
    const signal: Signal = {
      kind: refused ? 'throttled' : 'ok',
      status: refused ? 429 : 200,
      remaining: s.remaining,
      resetAt: now + (QUOTA - s.remaining) / perMs,
      policies,
      ...(refused ? { retryAt: now + 1 / perMs } : {}),
    }
    pacer.onResult(now, signal)
    if (refused) out.push(pacer.retryDelayMs!(now, 1, signal))
  }
  return out
}

describe('atb with an announced quota is scale-free', () => {
  it('multiplies every wait by k when every time is multiplied by k (k in [0.01, 100])', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), fc.double({ min: 0.01, max: 100, noNaN: true }), (steps, k) => {
        const small = BASE_WINDOW_MS * Math.max(1, 1 / k)
        const a = waits(steps, small)
        const b = waits(steps, small * k)
        expect(b).toHaveLength(a.length)
        for (let i = 0; i < a.length; i++) {
          // delayMs rounds up to whole ms at each scale; the probe times inherit that rounding.
          const slack = 2 * (1 + k) + 1e-9 * a[i]! * k
          expect(Math.abs(b[i]! - k * a[i]!)).toBeLessThanOrEqual(slack)
        }
      }),
      { numRuns: 300 },
    )
  })
})
