// The k = 1 headline beside an earlier one: the rows with a target (the default against
// headlineTarget, AATB against aatbTarget), each judged on both sides by the same rules, with a
// row flagged "worse" when its mean 429s or its completion ÷ the oracle rose by more than the 95%
// interval of the difference (the two runs' half-widths combined as independent: √(a² + b²)).
// The scale-free issue asks that no row that passed stops passing and none gets worse beyond
// its interval; this is where docs/results.md shows it.
import type { SimRow } from '../sim-row.js'
import type { Feedback } from '../types.js'
import { aatbTarget, evaluateHeadline, headlineTarget, type HeadlineTarget } from './headline.js'
import { cellKey } from './scale-judge.js'

export interface HeadlineBaseline {
  /** Where the earlier rows come from (shown above the tables). */
  source: string
  rows: SimRow[]
}

/** One side of a compared row: its means with their 95% half-widths, and its verdict. */
export interface ComparedSide {
  throttled: number
  throttledCi95: number
  oracleRatio: number
  oracleRatioCi95: number
  pass: boolean
}

export interface ComparedRow {
  strategy: string
  scenario: string
  server: string
  feedback: Feedback
  before: ComparedSide
  after: ComparedSide
  /** What rose beyond the interval of the difference: `429s`, `time`. */
  worse: string[]
}

/** As the headline sections judge them: the default against its targets and aws-adaptive, AATB against its own. */
const STRATEGIES: Array<[strategy: string, targetOf: (server: string, feedback: Feedback) => HeadlineTarget | undefined, peer: string | undefined]> = [
  ['atb', headlineTarget, 'aws-adaptive'],
  ['aatb', aatbTarget, undefined],
]

/** Whether `after` exceeds `before` by more than the 95% interval of their difference. */
function roseBeyond(before: number, beforeCi: number, after: number, afterCi: number): boolean {
  return after - before > Math.hypot(beforeCi, afterCi)
}

/** The rows of `strategy` that have a target, judged, with the row they came from; by row key. */
function judge(rows: readonly SimRow[], strategy: string, targetOf: (server: string, feedback: Feedback) => HeadlineTarget | undefined, peer: string | undefined) {
  const k1 = rows.filter((r) => (r.scale ?? 1) === 1)
  const source = new Map(k1.filter((r) => r.strategy === strategy).map((r) => [cellKey(r), r]))
  const judged = evaluateHeadline(k1, strategy, peer, targetOf).filter((h) => h.pass !== undefined)
  return new Map(judged.map((h) => [cellKey(h), { pass: h.pass === true, row: source.get(cellKey(h)) as SimRow }]))
}

/** Every row with a target present on both sides (k = 1), in the newer run's order. */
export function compareHeadline(beforeRows: readonly SimRow[], afterRows: readonly SimRow[]): ComparedRow[] {
  const out: ComparedRow[] = []
  for (const [strategy, targetOf, peer] of STRATEGIES) {
    const before = judge(beforeRows, strategy, targetOf, peer)
    for (const [key, now] of judge(afterRows, strategy, targetOf, peer)) {
      const then = before.get(key)
      if (!then) continue
      const worse: string[] = []
      if (roseBeyond(then.row.throttledMean, then.row.throttledCi95, now.row.throttledMean, now.row.throttledCi95)) worse.push('429s')
      if (roseBeyond(then.row.oracleRatio, then.row.oracleRatioCi95, now.row.oracleRatio, now.row.oracleRatioCi95)) worse.push('time')
      const side = (x: { pass: boolean; row: SimRow }): ComparedSide => ({
        throttled: x.row.throttledMean,
        throttledCi95: x.row.throttledCi95,
        oracleRatio: x.row.oracleRatio,
        oracleRatioCi95: x.row.oracleRatioCi95,
        pass: x.pass,
      })
      out.push({ strategy, scenario: now.row.scenario, server: now.row.server, feedback: now.row.feedback, before: side(then), after: side(now), worse })
    }
  }
  return out
}

const fmt = (mean: number, ci: number, digits: number) => `${mean.toFixed(digits)} ± ${ci.toFixed(digits)}`
const verdict = (pass: boolean) => (pass ? 'pass' : 'fail')

/** docs/results.md's section: counts per strategy and server, then every row side by side. */
export function renderHeadlineComparison(baseline: HeadlineBaseline, afterRows: readonly SimRow[]): string[] {
  const rows = compareHeadline(baseline.rows, afterRows)
  const out: string[] = ['## The k = 1 headline beside the baseline', '']
  out.push(
    `Baseline: ${baseline.source}. Each row is judged on both sides by the same targets (the default's headline ` +
      'targets; AATB\'s own); "worse" marks a mean 429s or completion ÷ oracle that rose by more than the 95% interval of ' +
      'the difference (the two half-widths combined, √(a² + b²)).',
    '',
  )
  out.push('| strategy | server | rows passing, baseline → now | lost | gained | worse beyond the interval |', '|---|---|---|---|---|---|')
  for (const strategy of STRATEGIES.map(([s]) => s)) {
    const mine = rows.filter((r) => r.strategy === strategy)
    for (const server of [...new Set(mine.map((r) => r.server))]) {
      const group = mine.filter((r) => r.server === server)
      const count = (pick: (r: ComparedRow) => boolean) => group.filter(pick).length
      out.push(
        `| \`${strategy}\` | ${server} | ${count((r) => r.before.pass)} → ${count((r) => r.after.pass)} of ${group.length} | ` +
          `${count((r) => r.before.pass && !r.after.pass)} | ${count((r) => !r.before.pass && r.after.pass)} | ${count((r) => r.worse.length > 0)} |`,
      )
    }
  }
  out.push('', '| strategy | scenario | server | feedback | 429s, baseline | 429s, now | ÷ oracle, baseline | ÷ oracle, now | result | worse |', '|---|---|---|---|---|---|---|---|---|---|')
  for (const r of rows) {
    out.push(
      `| \`${r.strategy}\` | ${r.scenario} | ${r.server} | ${r.feedback} | ${fmt(r.before.throttled, r.before.throttledCi95, 1)} | ` +
        `${fmt(r.after.throttled, r.after.throttledCi95, 1)} | ${fmt(r.before.oracleRatio, r.before.oracleRatioCi95, 3)} | ` +
        `${fmt(r.after.oracleRatio, r.after.oracleRatioCi95, 3)} | ${verdict(r.before.pass)} → ${verdict(r.after.pass)} | ${r.worse.join(', ') || '—'} |`,
    )
  }
  return out
}
