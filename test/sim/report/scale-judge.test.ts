import { describe, expect, it } from 'vitest'
import { judgeScale, scaleFreeBreaks, worseThanK1 } from '../../../src/sim/report/scale-judge.js'
import { row } from '../helpers/rows.js'

// One cell (real-trace-800, 27 clients) at k = 1 and k = 60, with UB and aws-adaptive beside atb.
const cell = (scale: number, strategy: string, throttledMean: number, extra: Parameters<typeof row>[0] = {}) =>
  row({ scale, strategy, throttledMean, oracleRatio: 1.05, ubThrottledMean: scale === 1 ? 1000 : 40_000, ...extra })

describe('judgeScale', () => {
  it('fixes the share of UB at k = 1, so UB growing with k does not loosen the allowance', () => {
    const rows = [
      cell(1, 'exponential', 1000), cell(60, 'exponential', 40_000),
      cell(1, 'aws-adaptive', 1100), cell(60, 'aws-adaptive', 45_000),
      cell(1, 'atb', 90), cell(60, 'atb', 150),
    ]
    const [k1, k60] = judgeScale(rows, 'atb')
    expect(k1).toMatchObject({ scale: 1, allowedThrottled: 100, pass: true, misses: [] })
    // 10% of UB at k = 60 would allow 4 000; the line is still 100.
    expect(k60).toMatchObject({ scale: 60, allowedThrottled: 100, ubThrottledAtK1: 1000, pass: false, misses: ['429s'] })
    expect(scaleFreeBreaks(judgeScale(rows, 'atb')).map((b) => b.cell.scale)).toEqual([60])
  })

  it('judges completion against the oracle, the aws-adaptive peer, and counts a cut-off run as a miss', () => {
    const rows = [
      cell(1, 'exponential', 1000), cell(1, 'aws-adaptive', 50),
      cell(1, 'atb', 60, { oracleRatio: 1.2, incompleteRuns: 1 }),
    ]
    expect(judgeScale(rows, 'atb')[0]!.misses).toEqual(['time', 'vs aws-adaptive', 'incomplete'])
  })

  it('holds stepped Retry-After cells to UB at the same k, and aatb to its own status-only shares', () => {
    const stepped = { server: 'token-bucket-stepped', feedback: 'retry-after' as const }
    const rows = [cell(10, 'exponential', 300, stepped), cell(1, 'exponential', 200, stepped), cell(10, 'atb', 301, { ...stepped, ubThrottledMean: 300 })]
    expect(judgeScale(rows, 'atb')[0]).toMatchObject({ allowedThrottled: 300, misses: ['429s'] })
    const aatb = judgeScale([cell(1, 'exponential', 1000), cell(1, 'aatb', 40)], 'aatb')[0]!
    expect(aatb).toMatchObject({ allowedThrottled: 30, misses: ['429s'] })
    expect(judgeScale([cell(1, 'exponential', 1000)], 'exponential')[0]!.pass).toBeUndefined()
  })
})

describe('worseThanK1', () => {
  it('flags a cell worse than at k = 1 beyond the interval of the difference, not within it', () => {
    const ci = { throttledCi95: 3, oracleRatioCi95: 0.01 }
    const rows = [cell(1, 'atb', 20, ci), cell(10, 'atb', 24, ci), cell(60, 'atb', 30, { ...ci, oracleRatio: 1.2 })]
    const worse = worseThanK1(judgeScale(rows, 'atb'))
    expect(worse.map((w) => [w.cell.scale, w.worse])).toEqual([[60, ['429s', 'time']]])
  })
})
