import { describe, expect, it } from 'vitest'
import { escapeXml, niceTicks, scatterSvg, timelineSvg } from '../../../src/sim/report/svg-charts.js'

describe('SVG charts', () => {
  it('picks round axis ticks covering the maximum', () => {
    expect(niceTicks(9)).toEqual([0, 2, 4, 6, 8, 10])
    expect(niceTicks(1000)).toEqual([0, 200, 400, 600, 800, 1000])
    expect(niceTicks(0)).toEqual([0])
  })

  it('draws one marker and one legend entry per strategy, escaping labels', () => {
    const svg = scatterSvg(
      [
        { label: 'UB', completionMs: 300_000, throttled: 900 },
        { label: 'ATB <paper> & co', completionMs: 360_000, throttled: 200 },
      ],
      { title: 'real-trace-800', oracleCompletionMs: 298_000 },
    )
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
    expect(svg.match(/<circle /g)).toHaveLength(4)
    expect(svg).toContain('ATB &lt;paper&gt; &amp; co')
    expect(svg).not.toContain('<paper>')
    expect(svg).toContain('oracle')
    expect(escapeXml(`"a'`)).toBe('&quot;a&#39;')
  })

  it('draws admitted bars up and rejected bars down, one per non-empty second', () => {
    const svg = timelineSvg({ admitted: [3, 0, 2], rejected: [0, 4, 1] }, { title: 'UB' })
    expect(svg.match(/fill="#2ca02c"/g)).toHaveLength(2)
    expect(svg.match(/fill="#d62728"/g)).toHaveLength(2)
  })
})
