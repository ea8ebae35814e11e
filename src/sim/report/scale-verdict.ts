// The scale grid's verdict in a few lines of text, for the terminal: how many cells each
// strategy passes, how many break scale-freeness, and, against an earlier run of the same
// grid, which cells changed. A pacer change is judged by exactly these figures (issue 15), so
// `simulate` prints them after a multi-scale grid and on `--compare FILE`, and nobody has to
// render the whole report to see whether a try won or lost cells.
import type { SimRow } from '../sim-row.js'
import { REFERENCE_STRATEGY } from '../grid-spec.js'
import { cellKey, judgeScale, scaleFreeBreaks, scaleLineFor, worseThanK1, type ScaleCell } from './scale-judge.js'

/** Where a status-only line needs this peer and the grid did not run it, the comparison is skipped. */
const PEER = 'aws-adaptive'

export interface StrategyVerdict {
  strategy: string
  cells: number
  passing: number
  breaks: number
  /** Cells worse than the same cell at k = 1 beyond the interval of the difference (the concurrent grid's line). */
  worse: number
  /** Passing cells / cells, per `server feedback clientModel` group and scale (scales ascending). */
  groups: Array<{ group: string; byScale: Array<{ scale: number; passing: number; cells: number }> }>
}

/** The verdict of every strategy in `rows` that has scale lines (judgeScale). */
export function scaleVerdicts(rows: readonly SimRow[]): StrategyVerdict[] {
  const strategies = [...new Set(rows.map((r) => r.strategy))].filter((s) => scaleLineFor(s) !== undefined)
  return strategies.map((strategy) => verdictOf(strategy, judgeScale(rows, strategy)))
}

function verdictOf(strategy: string, cells: ScaleCell[]): StrategyVerdict {
  const groups = new Map<string, Map<number, { passing: number; cells: number }>>()
  for (const cell of cells) {
    const group = `${cell.server} ${cell.feedback} ${cell.clientModel}`
    const byScale = groups.get(group) ?? new Map<number, { passing: number; cells: number }>()
    groups.set(group, byScale)
    const tally = byScale.get(cell.scale) ?? { passing: 0, cells: 0 }
    byScale.set(cell.scale, tally)
    tally.cells++
    if (cell.pass === true) tally.passing++
  }
  return {
    strategy,
    cells: cells.length,
    passing: cells.filter((c) => c.pass === true).length,
    breaks: scaleFreeBreaks(cells).length,
    worse: worseThanK1(cells).length,
    groups: [...groups].map(([group, byScale]) => ({
      group,
      byScale: [...byScale].sort(([a], [b]) => a - b).map(([scale, t]) => ({ scale, ...t })),
    })),
  }
}

export interface CellChange {
  strategy: string
  cell: ScaleCell
  /** The same cell in the earlier run. */
  before: ScaleCell
}

/** Cells of `strategy` that pass in one run and miss in the other (cells in both runs only). */
export function changedCells(before: readonly SimRow[], after: readonly SimRow[], strategy: string): CellChange[] {
  const earlier = new Map(judgeScale(before, strategy).map((c) => [`${cellKey(c)}|${c.scale}`, c]))
  const changes: CellChange[] = []
  for (const cell of judgeScale(after, strategy)) {
    const old = earlier.get(`${cellKey(cell)}|${cell.scale}`)
    if (old !== undefined && old.pass !== cell.pass) changes.push({ strategy, cell, before: old })
  }
  return changes
}

/** The verdict as text; with `before`, each count beside the earlier run's and the cells that changed. */
export function scaleVerdictText(rows: readonly SimRow[], before?: readonly SimRow[]): string {
  const verdicts = scaleVerdicts(rows)
  if (verdicts.length === 0) return ''
  const earlier = before === undefined ? undefined : new Map(scaleVerdicts(before).map((v) => [v.strategy, v]))
  const out: string[] = []
  if (!rows.some((r) => r.strategy === REFERENCE_STRATEGY && (r.scale ?? 1) === 1)) {
    out.push(`(no ${REFERENCE_STRATEGY} rows at k = 1: cells with a share of its 429s cannot be judged)`)
  }
  if (!rows.some((r) => r.strategy === PEER)) out.push(`(no ${PEER} rows: status-only cells judged without the comparison with it)`)
  for (const v of verdicts) {
    const old = earlier?.get(v.strategy)
    const was = (now: number, then: number | undefined) => (then === undefined || then === now ? `${now}` : `${then} → ${now}`)
    out.push(`${v.strategy}: ${was(v.passing, old?.passing)} of ${v.cells} cells pass, ${was(v.breaks, old?.breaks)} scale-free breaks, ${was(v.worse, old?.worse)} worse than at k = 1`)
    for (const g of v.groups) {
      const oldGroup = old?.groups.find((x) => x.group === g.group)
      const cells = g.byScale.map((s) => {
        const then = oldGroup?.byScale.find((x) => x.scale === s.scale)?.passing
        return `k=${s.scale} ${was(s.passing, then)}/${s.cells}`
      })
      out.push(`  ${g.group.padEnd(48)} ${cells.join('  ')}`)
    }
    if (before !== undefined) {
      for (const change of changedCells(before, rows, v.strategy)) {
        const c = change.cell
        const verdict = c.pass ? 'now passes' : `now misses (${c.misses.join(', ')})`
        const figures = `${change.before.throttled.toFixed(1)} → ${c.throttled.toFixed(1)} 429s, ${change.before.oracleRatio.toFixed(3)} → ${c.oracleRatio.toFixed(3)} × the oracle`
        out.push(`  ${verdict}: ${c.scenario} ${c.server} ${c.feedback} ${c.clientModel} k=${c.scale}: ${figures}`)
      }
    }
  }
  return `${out.join('\n')}\n`
}
