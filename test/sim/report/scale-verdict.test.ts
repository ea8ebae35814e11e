import { describe, expect, it } from 'vitest'
import { changedCells, scaleVerdicts, scaleVerdictText } from '../../../src/sim/report/scale-verdict.js'
import { row } from '../helpers/rows.js'

// One cell (real-trace-800, continuous status-only) at k = 1 and k = 10: UB, aws-adaptive and atb.
const cell = (scale: number, strategy: string, throttledMean: number, extra: Parameters<typeof row>[0] = {}) =>
  row({ scale, strategy, throttledMean, oracleRatio: 1.05, ubThrottledMean: scale === 1 ? 1000 : 5000, ...extra })

const grid = (atbAtK10: number) => [
  cell(1, 'exponential', 1000), cell(10, 'exponential', 5000),
  cell(1, 'aws-adaptive', 1100), cell(10, 'aws-adaptive', 5200),
  cell(1, 'atb', 90), cell(10, 'atb', atbAtK10),
]

describe('scaleVerdicts', () => {
  it('counts passing cells and scale-free breaks per strategy, by group and scale', () => {
    const [atb, ...others] = scaleVerdicts(grid(150))
    expect(others).toEqual([]) // UB and the peer have no scale lines
    expect(atb).toMatchObject({ strategy: 'atb', cells: 2, passing: 1, breaks: 1, worse: 1 })
    expect(atb!.groups).toEqual([
      {
        group: 'token-bucket-continuous status-only paper',
        byScale: [{ scale: 1, passing: 1, cells: 1 }, { scale: 10, passing: 0, cells: 1 }],
      },
    ])
  })
})

describe('changedCells and scaleVerdictText', () => {
  it('names each cell that changed verdict, with its figures before and after', () => {
    const before = grid(150)
    const after = grid(80)
    const [change, ...rest] = changedCells(before, after, 'atb')
    expect(rest).toEqual([])
    expect(change).toMatchObject({ cell: { scale: 10, pass: true, throttled: 80 }, before: { pass: false, throttled: 150 } })
    const text = scaleVerdictText(after, before)
    expect(text).toContain('atb: 1 → 2 of 2 cells pass, 1 → 0 scale-free breaks, 1 → 0 worse than at k = 1')
    expect(text).toContain('k=1 1/1  k=10 0 → 1/1')
    expect(text).toContain('now passes: real-trace-800 token-bucket-continuous status-only paper k=10: 150.0 → 80.0 429s')
  })

  it('says when the rows lack what a line compares with, and prints nothing without a judged strategy', () => {
    const text = scaleVerdictText([cell(1, 'atb', 90), cell(10, 'atb', 80)])
    expect(text).toContain('no exponential rows at k = 1')
    expect(text).toContain('no aws-adaptive rows')
    expect(scaleVerdictText([cell(1, 'exponential', 1000)])).toBe('')
  })
})
