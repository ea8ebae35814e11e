import { describe, expect, it } from 'vitest'
import { progressBar } from '../../../src/sim/report/progress-bar.js'

describe('progressBar', () => {
  it('stays silent when the stream is not a terminal', () => {
    const written: string[] = []
    const tick = progressBar({ isTTY: false, write: (t) => written.push(t) }, 'grid')
    tick(1, 2)
    tick(2, 2)
    expect(written).toEqual([])
  })

  it('redraws one line on a terminal and ends it when done', () => {
    const written: string[] = []
    let now = 0
    const tick = progressBar({ isTTY: true, columns: 100, write: (t) => written.push(t) }, 'grid', () => now)
    now = 1000
    tick(1, 4)
    tick(1, 4) // no change: no redraw
    now = 4000
    tick(4, 4)
    expect(written).toHaveLength(3)
    expect(written[0]).toMatch(/^\rgrid .* 25\.0% 1\/4 1s eta 3s$/)
    expect(written[1]).toContain('100.0% 4/4')
    expect(written[2]).toBe('\n')
  })
})
