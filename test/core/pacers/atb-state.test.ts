import { describe, expect, it } from 'vitest'
import { resolveAtbOptions } from '../../../src/core/pacers/atb-options.js'
import { LOG_ENTRIES, parseAtbState, SEND_LOG_ENTRIES, STATE_VERSION } from '../../../src/core/pacers/atb-state.js'
import type { PacerState } from '../../../src/core/types.js'

const NOW = Date.UTC(2026, 0, 1)
const o = resolveAtbOptions()

/** A congested lane's state as toJSON writes it. */
function saved(fields: Record<string, unknown> = {}): PacerState {
  return {
    kind: 'atb',
    version: STATE_VERSION,
    savedAt: NOW - 1000,
    createdAt: NOW - 60_000,
    congested: true,
    rate: 0.5,
    shareEstimate: 0.4,
    congestionRate: 0.6,
    tokens: 0.25,
    lastCongestionAt: NOW - 5000,
    congestedSince: NOW - 30_000,
    retryAt: 0,
    remaining: null,
    resetAt: null,
    sentSinceHint: 0,
    log: [
      [NOW - 4000, 1],
      [NOW - 3000, 0],
    ],
    sends: [
      [NOW - 4100, 1],
      [NOW - 3100, 2],
    ],
    timeScale: { drain: 2.5, measured: true },
    ...fields,
  }
}

describe('parseAtbState', () => {
  it('reads back what a congested lane saved', () => {
    const r = parseAtbState(saved(), o, NOW)
    expect(r).toMatchObject({ congested: true, rate: 0.5, shareEstimate: 0.4, congestionRate: 0.6, tokens: 0.25 })
    expect(r?.log).toEqual([
      [NOW - 4000, 1],
      [NOW - 3000, 0],
    ])
    expect(r?.sends).toEqual([
      [NOW - 4100, 1],
      [NOW - 3100, 2],
    ])
    expect(r?.timeScale).toEqual({ drain: 2.5, measured: true })
  })

  it('keeps only the newest entries a lane remembers', () => {
    const log = Array.from({ length: LOG_ENTRIES + 10 }, (_, i) => [NOW - 100_000 + i, 1])
    const sends = Array.from({ length: SEND_LOG_ENTRIES + 10 }, (_, i) => [NOW - 100_000 + i, 1])
    const r = parseAtbState(saved({ log, sends }), o, NOW)
    expect(r?.log).toHaveLength(LOG_ENTRIES)
    expect(r?.log[0]?.[0]).toBe(NOW - 100_000 + 10)
    expect(r?.sends).toHaveLength(SEND_LOG_ENTRIES)
  })

  it('a lane saved calm resumes free, whatever rate it carried', () => {
    const r = parseAtbState(saved({ congested: false, rate: 'nonsense' }), o, NOW)
    expect(r).toMatchObject({ congested: false, rate: Infinity, tokens: o.burstUnits })
  })

  it('older states without a time scale or a cut rate still resume', () => {
    const r = parseAtbState(saved({ timeScale: undefined, congestionRate: undefined }), o, NOW)
    expect(r?.timeScale).toBeUndefined()
    expect(r?.congestionRate).toBe(0)
    // An implausible time scale is dropped (the lane measures again), not trusted.
    expect(parseAtbState(saved({ timeScale: { drain: -1, measured: true } }), o, NOW)?.timeScale).toBeUndefined()
  })

  it('a hint is restored only with both its count and its reset', () => {
    const both = parseAtbState(saved({ remaining: 7, resetAt: NOW + 30_000, sentSinceHint: 2 }), o, NOW)
    expect(both?.guidance).toMatchObject({ remaining: 7, resetAt: NOW + 30_000, sentSinceHint: 2, hintAt: NOW - 1000 })
    const half = parseAtbState(saved({ remaining: 7 }), o, NOW)
    expect(half?.guidance.remaining).toBeUndefined()
  })

  it('rejects sends out of order or with a cost that is not a count', () => {
    expect(
      parseAtbState(
        saved({
          sends: [
            [NOW - 1000, 1],
            [NOW - 2000, 1],
          ],
        }),
        o,
        NOW,
      ),
    ).toBeUndefined()
    expect(parseAtbState(saved({ sends: [[NOW - 1000, -1]] }), o, NOW)).toBeUndefined()
    expect(parseAtbState(saved({ sends: [[NOW - 1000, Infinity]] }), o, NOW)).toBeUndefined()
  })

  it('rejects a state with no log, or debts beyond one burst', () => {
    expect(parseAtbState(saved({ log: 'x' }), o, NOW)).toBeUndefined()
    expect(parseAtbState(saved({ tokens: -o.burstUnits - 1 }), o, NOW)).toBeUndefined()
  })
})
