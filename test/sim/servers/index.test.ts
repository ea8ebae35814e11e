import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SERVER_KINDS, createServerModel, isServerKind } from '../../../src/sim/servers/index.js'
import type { QuotaConfig, ServerKind } from '../../../src/sim/types.js'

const paper: QuotaConfig = { capacity: 100, perMinute: 80, stepIntervalMs: 60_000 }

interface Op {
  gapMs: number
  cost: number
}

const ops = fc.array(
  fc.record({
    gapMs: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 20_000 }), fc.double({ min: 0, max: 3000, noNaN: true })),
    cost: fc.integer({ min: 1, max: 3 }),
  }),
  { maxLength: 50 },
)

function replay(kind: ServerKind, quota: QuotaConfig, start: number, history: readonly Op[]) {
  const model = createServerModel(kind, quota, start)
  let now = start
  for (const { gapMs, cost } of history) {
    now += gapMs
    model.admit(now, cost)
  }
  return { model, now }
}

describe('createServerModel', () => {
  it('builds every kind under its own name', () => {
    expect(SERVER_KINDS).toHaveLength(7)
    for (const kind of SERVER_KINDS) expect(createServerModel(kind, paper, 0).name).toBe(kind)
    expect(isServerKind('gcra')).toBe(true)
    expect(isServerKind('nope')).toBe(false)
  })

  it('names the policy when asked', () => {
    for (const kind of SERVER_KINDS) expect(createServerModel(kind, paper, 0, 'burst').admit(0, 1).policy).toBe('burst')
  })

  it.each(SERVER_KINDS)('%s passes the same burst from idle: exactly capacity', (kind) => {
    const model = createServerModel(kind, paper, 1_000)
    let admitted = 0
    for (let i = 0; i < 150; i++) if (model.admit(1_000, 1).admitted) admitted++
    expect(admitted).toBe(100)
  })

  it.each(SERVER_KINDS)('%s admits the same long-run rate (80 per minute) when saturated', (kind) => {
    const model = createServerModel(kind, paper, 0)
    let admitted = 0
    const minutes = 30
    for (let t = 0; t < minutes * 60_000; t += 100) if (model.admit(t, 1).admitted) admitted++
    // The burst (100) comes on top of the rate; a fixed window may gain one more window.
    expect(admitted).toBeGreaterThanOrEqual(80 * minutes - 100)
    expect(admitted).toBeLessThanOrEqual(80 * minutes + 2 * 100)
  })

  it.each(SERVER_KINDS)('%s: nextAdmitAt is exact, agrees with admit and Retry-After, and changes nothing', (kind) => {
    const quota: QuotaConfig = { capacity: 5, perMinute: 80, stepIntervalMs: 7_500 }
    const start = 1_700_000_000_000
    fc.assert(
      fc.property(ops, (history) => {
        const observed = createServerModel(kind, quota, start)
        let now = start
        for (let i = 0; i < history.length; i++) {
          const { gapMs, cost } = history[i]!
          now += gapMs
          const at = observed.nextAdmitAt(now, cost)
          expect(at).toBeGreaterThanOrEqual(now)
          const admission = observed.admit(now, cost)
          expect(admission.admitted).toBe(at === now)
          expect(admission.remaining).toBeGreaterThanOrEqual(0)
          expect(admission.resetMs).toBeGreaterThanOrEqual(0)
          if (admission.admitted) continue
          expect(admission.retryAfterMs).toBe(at - now)
          // A twin that saw the same admissions admits at `at` and not a microsecond before.
          const before = history.slice(0, i)
          const late = replay(kind, quota, start, before).model
          expect(late.admit(at, cost).admitted).toBe(true)
          if (at - 0.001 >= now) expect(replay(kind, quota, start, before).model.admit(at - 0.001, cost).admitted).toBe(false)
        }
        // Every nextAdmitAt call above left no trace: a model that never got one agrees.
        const { model: untouched } = replay(kind, quota, start, history)
        expect(untouched.nextAdmitAt(now + 1, 1)).toBe(observed.nextAdmitAt(now + 1, 1))
        expect(untouched.admit(now + 1, 1)).toEqual(observed.admit(now + 1, 1))
      }),
      { numRuns: 40 },
    )
  })
})
