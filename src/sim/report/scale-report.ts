// docs/results.md's scale section: the scale grid's verdicts per k (atb, aatb), the
// scale-free check, the concurrent grid's "no cell worse than at k = 1", every miss, and
// the charts of 429s per request and completion ÷ oracle against k.
import { REFERENCE_STRATEGY } from '../grid-spec.js'
import type { SimRow } from '../sim-row.js'
import { strategyLabel } from '../strategies.js'
import type { Feedback } from '../types.js'
import { scaleChartSvg, type ScalePanel } from './scale-chart.js'
import { judgeScale, scaleFreeBreaks, worseThanK1, type ScaleCell } from './scale-judge.js'

export const SCALE_CHART_STRATEGIES = [REFERENCE_STRATEGY, 'atb', 'aatb', 'aws-adaptive']
const JUDGED = ['atb', 'aatb']
const SERVERS = ['token-bucket-continuous', 'token-bucket-stepped']
const FEEDBACKS: Feedback[] = ['status-only', 'retry-after', 'ratelimit']
const refill = (server: string) => server.replace('token-bucket-', '')

export interface ScaleChart {
  file: string
  caption: string
  svg: string
}

export interface ScaleSectionOptions {
  /** Chart paths relative to the markdown file, in scaleCharts' order. */
  chartPaths?: string[]
  /** Commands that produced the rows. */
  commands?: string[]
}

const scalesOf = (rows: readonly SimRow[]) => [...new Set(rows.map((r) => r.scale ?? 1))].sort((a, b) => a - b)
const modelsOf = (rows: readonly SimRow[]) => [...new Set(rows.map((r) => r.clientModel))]
const num = (v: number | undefined, digits = 1) => (v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits))
const mean = (values: number[]) => (values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length)

/** Mean over scenarios of a figure, per strategy × refill × feedback × k, for one client model. */
function meanOver(rows: readonly SimRow[], clientModel: string, strategy: string, server: string, feedback: Feedback, k: number, get: (r: SimRow) => number): number {
  return mean(rows.filter((r) => r.clientModel === clientModel && r.strategy === strategy && r.server === server && r.feedback === feedback && (r.scale ?? 1) === k).map(get))
}

export function scaleCharts(rows: readonly SimRow[]): ScaleChart[] {
  const charts: ScaleChart[] = []
  const scales = scalesOf(rows)
  if (scales.length < 2) return charts
  for (const model of modelsOf(rows)) {
    const panels = (get: (r: SimRow) => number): ScalePanel[] =>
      SERVERS.flatMap((server) =>
        FEEDBACKS.map((feedback) => ({
          title: `${refill(server)} · ${feedback}`,
          series: SCALE_CHART_STRATEGIES.filter((s) => rows.some((r) => r.strategy === s)).map((s) => ({
            label: strategyLabel(s),
            points: scales.map((k) => ({ k, value: meanOver(rows, model, s, server, feedback, k, get) })),
          })),
        })),
      )
    const seeds = rows.find((r) => r.clientModel === model)?.seeds ?? 0
    charts.push({
      file: `scale-429s-per-request-${model}.svg`,
      caption: `429s per request against k, ${model} clients: mean over the 15 paper scenarios (${seeds} seeds each)`,
      svg: scaleChartSvg(panels((r) => r.throttledMean / r.requests), {
        title: `429s per request against the time scale k (${model} clients, mean over scenarios)`,
        yLabel: '429s per request (log)',
        logY: { floor: 0.001 },
      }),
    })
    charts.push({
      file: `scale-completion-vs-oracle-${model}.svg`,
      caption: `Completion ÷ oracle against k, ${model} clients: mean over the 15 paper scenarios (${seeds} seeds each)`,
      svg: scaleChartSvg(panels((r) => r.oracleRatio), {
        title: `Completion ÷ oracle against the time scale k (${model} clients, mean over scenarios)`,
        yLabel: 'completion ÷ oracle',
        reference: { value: 1, label: 'oracle' },
      }),
    })
  }
  return charts
}

export function renderScaleSection(rows: readonly SimRow[], options: ScaleSectionOptions = {}): string[] {
  const scales = scalesOf(rows)
  if (scales.length < 2) return []
  const seeds = [...new Set(rows.map((r) => r.seeds))].join('/')
  const out: string[] = [
    '## Scale: the same workloads and quota from 800 per minute to 80 per hour',
    '',
    'Every run of this section is a paper run stretched in time by k (`src/sim/scale-run.ts`): the 100-token bucket refills ' +
      'at 80/k per minute (stepped: 80 tokens every 60·k s), and the arrivals, their window, the start stagger and the run\'s ' +
      'virtual-time limit (6 h · k) are k times longer; the 20 ms round trip stays. A scale-free client scores alike at every k. ' +
      `Seeds per cell: ${seeds}.`,
    '',
  ]
  if (rows.some((r) => r.seeds < 30)) {
    out.push(
      '`npm run results` runs the scale grids with fewer seeds than the acceptance runs (`--seeds 30`) to stay within a few ' +
        'minutes; the figures below are from the commands shown.',
      '',
    )
  }
  if (options.commands && options.commands.length > 0) out.push('```', ...options.commands, '```', '')
  out.push(
    '**Lines**, fixed at k = 1 (UB\'s own count grows with k and must not loosen them): allowed 429s = min(UB at k, ' +
      'max(share × UB at k = 1, clients × c)); completion ÷ oracle ≤ the limit; status-only cells also need fewer 429s than ' +
      '`aws-adaptive` at the same k; any run cut off by the time limit is a miss.',
    '',
    '| refill | feedback | `atb` share / c | `atb` ≤ oracle × | `aatb` |',
    '|---|---|---|---|---|',
    '| continuous | status-only | 10% / 1 | 1.15 | 3% / 1, ≤ 1.15 |',
    '| stepped | status-only | 25% / 1 | 1.25 | 10% / 1, ≤ 1.25 |',
    '| continuous | retry-after | 3% / 1 | 1.15 | as `atb` |',
    '| continuous | ratelimit | 1% / 0.1 | 1.10 | as `atb` |',
    '| stepped | retry-after, ratelimit | no more than UB (which honours Retry-After) at k | 1.10 | as `atb` |',
    '',
  )
  for (const model of modelsOf(rows)) {
    const modelRows = rows.filter((r) => r.clientModel === model)
    for (const strategy of JUDGED) {
      const cells = judgeScale(modelRows, strategy)
      if (cells.length === 0) continue
      out.push(...verdictTable(cells, scales, model, strategy), '')
    }
  }
  out.push(...figuresTable(rows, scales), '')
  if (options.chartPaths) {
    const charts = scaleCharts(rows)
    charts.forEach((chart, i) => {
      const path = options.chartPaths![i]
      if (path) out.push(`![${chart.caption}](${path})`, '', `*${chart.caption}*`, '')
    })
  }
  for (const model of modelsOf(rows)) {
    const modelRows = rows.filter((r) => r.clientModel === model)
    for (const strategy of JUDGED) {
      const cells = judgeScale(modelRows, strategy)
      if (cells.length > 0) out.push(...missList(cells, model, strategy), '')
    }
  }
  return out
}

function verdictTable(cells: readonly ScaleCell[], scales: readonly number[], model: string, strategy: string): string[] {
  const breaks = scaleFreeBreaks(cells)
  const worse = worseThanK1(cells)
  const judged = cells.filter((c) => c.pass !== undefined)
  const passes = judged.filter((c) => c.pass).length
  const out = [
    `### \`${strategy}\`, ${model} clients — ${passes} of ${judged.length} cells pass; ${breaks.length} pass at k = 1 and miss at another k; ` +
      `${worse.length} worse than at k = 1`,
    '',
    'Cells: passes / scenarios (scale-free breaks: cells passing at k = 1 that miss here; worse: 429s or completion ÷ oracle ' +
      'worse than at k = 1 beyond the 95% interval of the difference, or incomplete).',
    '',
    `| refill | feedback | ${scales.map((k) => `k = ${k}`).join(' | ')} |`,
    `|---|---|${scales.map(() => '---|').join('')}`,
  ]
  for (const server of SERVERS) {
    for (const feedback of FEEDBACKS) {
      const group = cells.filter((c) => c.server === server && c.feedback === feedback)
      if (group.length === 0) continue
      const line = scales.map((k) => {
        const at = group.filter((c) => c.scale === k)
        const pass = at.filter((c) => c.pass).length
        const broke = breaks.filter((b) => b.cell.server === server && b.cell.feedback === feedback && b.cell.scale === k).length
        const w = worse.filter((b) => b.cell.server === server && b.cell.feedback === feedback && b.cell.scale === k).length
        return k === 1 ? `${pass}/${at.length}` : `${pass}/${at.length} (breaks ${broke}, worse ${w})`
      })
      out.push(`| ${refill(server)} | ${feedback} | ${line.join(' | ')} |`)
    }
  }
  return out
}

function figuresTable(rows: readonly SimRow[], scales: readonly number[]): string[] {
  const strategies = SCALE_CHART_STRATEGIES.filter((s) => rows.some((r) => r.strategy === s))
  const out = [
    '### 429s per request / completion ÷ oracle, mean over the 15 scenarios',
    '',
    `| client model | refill | feedback | strategy | ${scales.map((k) => `k = ${k}`).join(' | ')} |`,
    `|---|---|---|---|${scales.map(() => '---|').join('')}`,
  ]
  for (const model of modelsOf(rows)) {
    for (const server of SERVERS) {
      for (const feedback of FEEDBACKS) {
        for (const s of strategies) {
          const cells = scales.map((k) => {
            const perRequest = meanOver(rows, model, s, server, feedback, k, (r) => r.throttledMean / r.requests)
            const ratio = meanOver(rows, model, s, server, feedback, k, (r) => r.oracleRatio)
            return `${num(perRequest, 3)} / ${num(ratio, 3)}`
          })
          out.push(`| ${model} | ${refill(server)} | ${feedback} | ${strategyLabel(s)} | ${cells.join(' | ')} |`)
        }
      }
    }
  }
  return out
}

function missList(cells: readonly ScaleCell[], model: string, strategy: string): string[] {
  const misses = cells.filter((c) => c.pass === false)
  const out = [`### Every miss of \`${strategy}\`, ${model} clients (${misses.length})`, '']
  if (misses.length === 0) return [...out, 'None.']
  out.push(
    '| scenario | refill | feedback | k | 429s | allowed | UB 429s at k | `aws-adaptive` 429s | ÷ oracle | limit | missed |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  )
  for (const c of misses) {
    out.push(
      `| ${c.scenario} | ${refill(c.server)} | ${c.feedback} | ${c.scale} | ${num(c.throttled)} | ${num(c.allowedThrottled)} | ${num(c.ubThrottled)} | ` +
        `${num(c.peerThrottled)} | ${num(c.oracleRatio, 3)} | ${num(c.oracleLimit, 2)} | ${c.misses.join(', ')}${c.incompleteRuns > 0 ? ` (${c.incompleteRuns} runs)` : ''} |`,
    )
  }
  return out
}
