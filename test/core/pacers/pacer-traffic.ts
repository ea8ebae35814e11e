// Test helpers shared by the ATB tests: drive a pacer through runs of attempts in virtual time.
import type { Pacer, Signal } from '../../../src/core/types.js'
import { tunedAtb } from './tuned-atb.js'

/**
 * The rules at the paper's scale (k = 1): these lanes get 10/s through for 10 s, a quota that a
 * lane alone drained that fast would read as a faster one (atb-time-scale.ts, drainBandLowMs).
 */
export const PAPER_SCALE = { drainBandLowMs: 0 }

const OK: Signal = { kind: 'ok', status: 200 }
const THROTTLED: Signal = { kind: 'throttled', status: 429 }

/** `count` attempts, one every `everyMs`, each answered at once with `signal`; returns the time after the last. */
export function traffic(pacer: Pacer, from: number, count: number, everyMs: number, signal: Signal = OK): number {
  let now = from
  for (let i = 0; i < count; i++) {
    pacer.onSend(now, 1)
    pacer.onResult(now, signal)
    now += everyMs
  }
  return now
}

/**
 * An `atb(options)` lane on the paper's scale (PAPER_SCALE) created at `from` (random draws 0.5) that gets `count` successes `everyMs`
 * apart, then a 429 carrying a Retry-After of `retryAfterMs` (none: status only).
 */
export function cutLane(options: object, from: number, count: number, everyMs: number, retryAfterMs?: number): { pacer: Pacer; now: number } {
  const pacer = tunedAtb({ ...PAPER_SCALE, ...options }).create({ now: from, random: () => 0.5 })
  const now = traffic(pacer, from, count, everyMs)
  pacer.onSend(now, 1)
  pacer.onResult(now, retryAfterMs === undefined ? THROTTLED : { ...THROTTLED, retryAt: now + retryAfterMs })
  return { pacer, now }
}

/** Send each time the lane allows (gate included), every send admitted, until `until`; returns the rate then. */
export function sendUntilRate(pacer: Pacer, from: number, until: number): number {
  let t = from
  while (t < until) {
    t += Math.max(1, pacer.delayMs(t, 1))
    pacer.onSend(t, 1)
    pacer.onResult(t, OK)
  }
  return pacer.ratePerSecond
}

/** One attempt sent at `now` and answered at once with `signal` (a 200 without hints by default). */
export function answered(pacer: Pacer, now: number, signal: Signal = OK): void {
  pacer.onSend(now, 1)
  pacer.onResult(now, signal)
}
