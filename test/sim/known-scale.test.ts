// The simulator's `atb-known-scale`: the default ATB told the quota's time scale instead of
// measuring it (the measure of what measuring costs, docs/algorithms.md). Told k, a lane fed the
// same status-only script with every time × k decides the same way with every wait × k.
import { describe, expect, it } from 'vitest'
import { createAtbPacer } from '../../src/core/pacers/atb-adaptive.js'
import { resolveAtbOptions } from '../../src/core/pacers/atb-options.js'
import type { Pacer, Signal } from '../../src/core/types.js'
import { PAPER_QUOTA } from '../../src/sim/grid-spec.js'
import { scaleQuota } from '../../src/sim/scale-run.js'
import { lookupStrategy } from '../../src/sim/strategies.js'

const T0 = 1_000_000
const ok: Signal = { kind: 'ok', status: 200 }
const throttled: Signal = { kind: 'throttled', status: 429 }

/** Every wait along a status-only script: 20 admissions a second apart, then answers by `pattern` (1 = admitted). */
function waits(k: number): number[] {
  const pacer = Object.assign(createAtbPacer(resolveAtbOptions(), { now: T0, random: () => 0.5 }), { fleetTimeScale: k })
  const rttMs = 20 * k
  const out: number[] = []
  let now = T0
  const attempt = (signal: Signal) => {
    const wait = pacer.delayMs(now, 1)
    out.push(wait)
    now += wait
    pacer.onSend(now, 1)
    now += rttMs
    pacer.onResult(now, signal)
  }
  for (let i = 0; i < 20; i++) {
    attempt(ok)
    now += 1000 * k
  }
  for (const admitted of [0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1]) attempt(admitted ? ok : throttled)
  return out
}

describe('atb-known-scale', () => {
  it('is registered, and its pacer told k waits k times as long on the same script k times slower', () => {
    expect(lookupStrategy('atb-known-scale')).toBeDefined()
    const base = waits(1)
    expect(base.some((w) => w > 0)).toBe(true)
    for (const k of [0.1, 10, 60]) {
      const scaled = waits(k)
      // Waits are whole milliseconds and each one moves the script's clock, so the rounding
      // accumulates: within 1% (at most 20 ms in 7 s at k = 0.1, read on the scale-1 clock).
      scaled.forEach((w, i) => expect(Math.abs(w - base[i]! * k)).toBeLessThanOrEqual(0.01 * base[i]! * k + 2 * Math.max(1, k)))
    }
  })

  it('gives the pacer the quota\'s true scale: the paper quota is 1, one refilling 10 × slower is 10', () => {
    const setup = lookupStrategy('atb-known-scale')!.setup
    for (const k of [1, 10]) {
      const { strategy } = setup({ clients: 1, quota: scaleQuota(PAPER_QUOTA, k), seed: 1 })
      const pacer = strategy.create({ now: T0, random: () => 0.5 })
      // A lane told k keeps its admitted-rate window (60 s at k = 1) k times longer: after 10
      // admissions 2 s apart × k and a 429, its first cut rate is the same count over k × the span.
      let now = T0
      for (let i = 0; i < 10; i++) {
        pacer.onSend(now, 1)
        pacer.onResult(now + 20 * k, ok)
        now += 2000 * k
      }
      pacer.onSend(now, 1)
      pacer.onResult(now + 20 * k, throttled)
      expect(pacer.ratePerSecond * k).toBeCloseTo(waitsRate(), 6)
    }
  })

  it('takes one input off by a factor: the told scale (`:scale*F`) or one resolved value (`:KEY*F`)', () => {
    // Three admissions 1000 s apart and a 429: the cut lands on the rate floor, which runs on the scale.
    const cutRate = (name: string, k: number) => {
      const { strategy } = lookupStrategy(name)!.setup({ clients: 1, quota: scaleQuota(PAPER_QUOTA, k), seed: 1 })
      return rateAfterCut(strategy.create({ now: T0, random: () => 0.5 }), 3, 1_000_000)
    }
    expect(cutRate('atb-known-scale', 1)).toBeCloseTo(0.01, 9)
    // Told twice the true scale on the paper's quota: the same pacer as told the truth on a quota twice as slow.
    expect(cutRate('atb-known-scale:scale*2', 1)).toBe(cutRate('atb-known-scale', 2))
    expect(cutRate('atb-known-scale:scale*2', 1)).not.toBe(cutRate('atb-known-scale', 1))
    expect(cutRate('atb-known-scale:scale*2', 1)).toBeCloseTo(0.005, 9)
    // A rate floor 1000 × the default's (0.01/s) holds the cut at 10/s.
    expect(cutRate('atb-known-scale:minRatePerSecond*1000', 1)).toBeCloseTo(10, 9)
    expect(lookupStrategy('atb-known-scale:growthPerSecond*0.5')?.name).toBe('atb-known-scale:growthPerSecond*0.5')
    for (const bad of ['atb-known-scale:nothing*2', 'atb-known-scale:scale*0', 'atb-known-scale:honourRetryAfter*2', 'atb-known-scale:scale', 'atb-known-scale:']) {
      expect(lookupStrategy(bad)).toBeUndefined()
    }
  })
})

/** The rate the same script sets at k = 1 (the reference for the scaled runs). */
function waitsRate(): number {
  return rateAfterCut(Object.assign(createAtbPacer(resolveAtbOptions(), { now: T0, random: () => 0.5 }), { fleetTimeScale: 1 }), 10, 2000)
}

/** The pacer's rate after `admissions` admissions `gapMs` apart and then a 429 (each answered 20 ms after its send). */
function rateAfterCut(pacer: Pacer, admissions: number, gapMs: number): number {
  let now = T0
  for (let i = 0; i < admissions; i++) {
    pacer.onSend(now, 1)
    pacer.onResult(now + 20, ok)
    now += gapMs
  }
  pacer.onSend(now, 1)
  pacer.onResult(now + 20, throttled)
  return pacer.ratePerSecond
}
