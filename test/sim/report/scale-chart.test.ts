import { describe, expect, it } from 'vitest'
import { scaleChartSvg } from '../../../src/sim/report/scale-chart.js'

describe('scaleChartSvg', () => {
  it('draws one line per strategy in every panel on a log k axis, with zeros at the log floor', () => {
    const series = [
      { label: 'UB', points: [{ k: 0.1, value: 0.3 }, { k: 1, value: 0.9 }, { k: 60, value: 40 }] },
      { label: 'ATB <default>', points: [{ k: 0.1, value: 0 }, { k: 1, value: 0.08 }, { k: 60, value: 3 }] },
    ]
    const svg = scaleChartSvg([{ title: 'continuous · status-only', series }, { title: 'stepped · status-only', series }], {
      title: '429s per request',
      yLabel: '429s per request',
      logY: { floor: 0.001 },
    })
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.match(/<polyline /g)).toHaveLength(4)
    expect(svg.match(/<circle /g)).toHaveLength(12)
    expect(svg).toContain('ATB &lt;default&gt;')
    expect(svg).toContain('≤0.001')
    // k = 0.1 sits at the left edge of the first panel, k = 60 at its right edge.
    expect(svg).toContain('<text x="70.0" y="')
    expect(svg).toContain('<text x="330.0" y="')
  })
})
