import { describe, expect, it } from 'vitest'
import { normalizeSpec, PAPER_QUOTA } from '../../../src/sim/grid-spec.js'
import { renderMarkdown } from '../../../src/sim/report/markdown-report.js'
import { scenarioByName } from '../../../src/sim/scenarios.js'
import { row } from '../helpers/rows.js'

const spec = normalizeSpec({
  name: 'paper', scenarios: [scenarioByName('real-trace-800')!], servers: ['token-bucket-continuous'], clientModels: ['paper'],
  strategies: ['atb-paper', 'atb', 'aws-adaptive'], feedbacks: ['status-only'], seeds: 30, firstSeed: 1, rttMs: 20, quota: PAPER_QUOTA,
})

describe('renderMarkdown', () => {
  const rows = [
    row({ strategy: 'exponential', throttledMean: 1000, throttledVsUbPct: 0, completionVsUbPct: 0 }),
    row({ strategy: 'atb-paper', throttledMean: 250, throttledVsUbPct: -75, completionVsUbPct: 22.5 }),
    row({ strategy: 'atb', throttledMean: 80, throttledVsUbPct: -92, completionVsUbPct: 9.5, completionMsMean: 328_500 }),
    row({ strategy: 'aws-adaptive', throttledMean: 1050, throttledVsUbPct: 5, completionVsUbPct: -0.3 }),
  ]
  const text = renderMarkdown(spec, rows, { timing: 'Grid time: 1 s.', charts: [{ path: 'img/a.svg', caption: 'A chart' }] })

  it('puts the paper\'s figure beside our re-implementation', () => {
    expect(text).toMatch(/\| real-trace-800 \| ATB \(`atb-paper`\) \| -70\.1% \/ \+21\.3% \| -75\.0% \/ \+22\.5% \| — \| -92\.0% \/ \+9\.5% \| — \|/)
  })

  it('marks each headline row pass or fail', () => {
    expect(text).toContain('### token-bucket-continuous — 1 of 1 rows pass')
    expect(text).toMatch(/\| real-trace-800 \| status-only \| paper \| 1000\.0 \| 80\.0 \| 100\.0 \| 1050\.0 \| \+9\.5% \| 1\.107 \| ≤ 1\.15× UB \| \*\*pass\*\* \|/)
  })

  it('tables every strategy in the paper\'s form, documents the set-up and links charts', () => {
    expect(text).toContain('| real-trace-800 | 1000.0 ± 4.0 | 330.0 s | 298.0 s | -75.0% / +22.5% | -92.0% / +9.5% | +5.0% / -0.3% |')
    expect(text).toContain('Pareto draws with α = 1.2')
    expect(text).toContain('Grid time: 1 s.')
    expect(text).toContain('![A chart](img/a.svg)')
  })

  it('quotes our own figures in the reproduction notes from the rows, not from a past run', () => {
    const gaps = renderMarkdown(spec, [
      ...rows,
      row({ strategy: 'window', throttledVsUbPct: -31.2, completionVsUbPct: 4 }),
      row({ strategy: 'aatb-paper', throttledVsUbPct: -90, completionVsUbPct: 40.04 }),
    ])
    expect(gaps).toContain('so WB behaves almost like UB (-31.2%). The paper\'s -62.7% implies')
    expect(gaps).toContain('**AATB\'s completion time** (+40.0% against +27.6% on the real trace)')
    // No 500-request rows in this grid: no bullet about them, and none about WB without a WB row.
    expect(gaps).not.toContain('The 500-request scenarios')
    expect(text).not.toContain('WB on the real trace')
  })

  it('runs each row atb misses again with aatb, against the same target', () => {
    const missed = renderMarkdown(spec, [
      row({ strategy: 'exponential', throttledMean: 1000 }),
      row({ strategy: 'atb', throttledMean: 150, completionVsUbPct: 9.5 }),
      row({ strategy: 'aatb', throttledMean: 20, completionVsUbPct: 10 }),
      row({ strategy: 'aws-adaptive', throttledMean: 1050 }),
    ])
    expect(missed).toContain('| token-bucket-continuous | 0 of 1 | 1 of 1 | — |')
    expect(missed).toContain('Each row `atb` fails, with `aatb`\'s figures: 1 of 1 pass with the fleet\'s view.')
    expect(missed).toMatch(/\| real-trace-800 \| token-bucket-continuous \| status-only \| 150\.0 ✗ \| \+9\.5% \| 100\.0 \| 20\.0 \| \+10\.0% \| [0-9.]+ \| ≤ 1\.15× UB \| \*\*pass\*\* \|/)
    // Without a miss there is nothing to show.
    expect(text).not.toContain('the fleet\'s view (`aatb`)')
  })

  it('adds the scale section from rows at several k, keeping the paper\'s sections at k = 1', () => {
    const scaled = [
      ...rows,
      row({ scale: 60, strategy: 'exponential', throttledMean: 40_000, ubThrottledMean: 40_000 }),
      row({ scale: 60, strategy: 'aws-adaptive', throttledMean: 45_000, ubThrottledMean: 40_000 }),
      row({ scale: 60, strategy: 'atb', throttledMean: 3000, ubThrottledMean: 40_000, seeds: 10 }),
    ]
    const withScale = renderMarkdown(spec, scaled, { scale: { rows: scaled, chartPaths: ['results/a.svg', 'results/b.svg'], commands: ['npx polite-fetch simulate --grid scale'] } })
    expect(withScale).toContain('### token-bucket-continuous — 1 of 1 rows pass')
    expect(withScale).toContain('## Scale: the same workloads and quota from 800 per minute to 80 per hour')
    expect(withScale).toContain('| continuous | status-only | 1/1 | 0/1 (breaks 1, worse 1) |')
    expect(withScale).toMatch(/\| real-trace-800 \| continuous \| status-only \| 60 \| 3000\.0 \| 100\.0 \| 40000\.0 \| 45000\.0 \| 1\.107 \| 1\.15 \| 429s \|/)
    expect(withScale).toContain('![429s per request against k')
    expect(withScale).toContain('fewer seeds than the acceptance runs')
    expect(text).not.toContain('## Scale:')
  })
})
