import { describe, expect, it } from 'vitest'
import { compareHeadline, renderHeadlineComparison } from '../../../src/sim/report/headline-comparison.js'
import { row } from '../helpers/rows.js'

// Default row: real-trace-800, continuous, status-only, 27 clients, UB 1000 429s; the default's target
// allows min(UB, max(10% × UB, 27)) = 100 429s at ≤ 1.15 × UB's time, and fewer than aws-adaptive.
const peer = (over = {}) => row({ strategy: 'aws-adaptive', throttledMean: 500, ...over })

describe('the k = 1 headline beside a baseline', () => {
  it('flags a row whose 429s rose by more than the interval of the difference, and one that stopped passing', () => {
    const before = [row({ throttledMean: 90, throttledCi95: 3 }), peer()]
    const within = [row({ throttledMean: 93, throttledCi95: 3 }), peer()] // +3 < √(3² + 3²) ≈ 4.2
    const beyond = [row({ throttledMean: 101, throttledCi95: 3 }), peer()] // +11, and over the 100 allowed
    const [same] = compareHeadline(before, within)
    expect(same).toMatchObject({ strategy: 'atb', worse: [], before: { pass: true }, after: { pass: true } })
    const [worse] = compareHeadline(before, beyond)
    expect(worse).toMatchObject({ worse: ['429s'], before: { pass: true }, after: { pass: false } })
  })

  it('flags completion ÷ the oracle the same way, and judges AATB by its own targets without the peer', () => {
    const aatb = (over = {}) => row({ strategy: 'aatb', throttledMean: 20, ...over })
    const [slower] = compareHeadline([aatb({ oracleRatio: 1.05, oracleRatioCi95: 0.01 })], [aatb({ oracleRatio: 1.08, oracleRatioCi95: 0.01 })])
    expect(slower).toMatchObject({ strategy: 'aatb', worse: ['time'], after: { pass: true } })
  })

  it('leaves out rows without a target and rows missing on one side', () => {
    const stepped = { server: 'token-bucket-stepped', feedback: 'ratelimit' as const }
    expect(compareHeadline([row(stepped), peer(stepped)], [row(stepped), peer(stepped)])).toEqual([])
    expect(compareHeadline([peer()], [row({}), peer()])).toEqual([])
  })

  it('renders the counts per strategy and server, then every row with both sides', () => {
    const lines = renderHeadlineComparison({ source: 'commit abc', rows: [row({ throttledMean: 90 }), peer()] }, [row({ throttledMean: 120 }), peer()])
    const text = lines.join('\n')
    expect(text).toContain('Baseline: commit abc.')
    expect(text).toContain('| `atb` | token-bucket-continuous | 1 → 0 of 1 | 1 | 0 | 1 |')
    expect(text).toContain('| `atb` | real-trace-800 | token-bucket-continuous | status-only | 90.0 ± 4.0 | 120.0 ± 4.0 |')
    expect(text).toContain('| pass → fail | 429s |')
  })
})
