// The default ATB on a bucket refilled in steps (Envoy's local rate limit: 100 units, 80 every
// 60 s) that answers with X-RateLimit headers (limit, remaining, reset) and no policy: the reset
// is the bucket's time to full, whole steps away once more than one step's units are missing.
// One lane with a backlog, every send answered at once, on a manual clock.
import { describe, expect, it } from 'vitest'
import { atb } from '../../../src/core/pacers/atb.js'
import type { Signal } from '../../../src/core/types.js'
import { tokenBucket } from '../../../src/sim/servers/token-bucket.js'

const T0 = 1_700_000_000_000

/** The lane's admissions per step (60 s × k), sending whenever it may for `steps` steps. */
function admittedPerStep(k: number, steps: number): number[] {
  const stepMs = 60_000 * k
  const server = tokenBucket({ capacity: 100, perMinute: 80 / k, refill: 'stepped', stepIntervalMs: stepMs, now: T0 })
  const pacer = atb().create({ now: T0, random: () => 0.5 })
  const perStep = new Array<number>(steps).fill(0)
  let now = T0
  while (now < T0 + steps * stepMs) {
    const wait = pacer.delayMs(now, 1)
    if (wait > 0) {
      now += wait
      continue
    }
    pacer.onSend(now, 1)
    const a = server.admit(now, 1)
    // X-RateLimit-Reset and Retry-After in whole seconds, rounded up, as the headers carry them.
    const signal: Signal = {
      kind: a.admitted ? 'ok' : 'throttled',
      status: a.admitted ? 200 : 429,
      remaining: a.remaining,
      limit: a.limit,
      resetAt: Math.ceil((now + a.resetMs) / 1000) * 1000,
    }
    if (!a.admitted && a.retryAfterMs !== undefined) signal.retryAt = now + Math.ceil(a.retryAfterMs / 1000) * 1000
    pacer.onResult(now, signal)
    if (a.admitted) perStep[Math.floor((now - T0) / stepMs)]!++
    now += 1 // the next call is queued behind this one
  }
  return perStep
}

describe('atb on a stepped bucket with X-RateLimit headers', () => {
  it('spends every step: an empty lane waits for the next step, not for the reset (time to full)', () => {
    const perStep = admittedPerStep(1, 8)
    // Waiting for the reset, the lane skipped every other step once the bucket was empty.
    for (const [step, admitted] of perStep.entries()) expect(admitted, `step ${step}: ${perStep.join(', ')}`).toBeGreaterThan(0)
    // 100, 80, 80, … (before: 95, 85, 0, 100, 0, 100, 0, 100).
    expect(perStep.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(100 + 7 * 80 - 20)
  })

  it('every time × k: the same admissions per step', () => {
    const base = admittedPerStep(1, 6)
    for (const k of [0.1, 10, 60]) expect(admittedPerStep(k, 6)).toEqual(base)
  })
})
