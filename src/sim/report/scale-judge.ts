// The scale grid's verdicts (issue 15). A client that is scale-free scores alike at every
// k, so each cell's allowance is fixed at k = 1: the share of UB's 429s is taken from UB
// at k = 1 (UB's own count grows with k and must not loosen the allowance), capped by UB
// at the cell's own k. Completion is judged against the oracle on every line. Where the
// server sends Retry-After on a stepped bucket the line is exponential backoff that
// honours it (the harness holds every strategy to it) at the same k. Any run cut off by
// the virtual-time limit makes its cell a miss.
import { REFERENCE_STRATEGY } from '../grid-spec.js'
import { isKnownScale } from '../strategies.js'
import type { SimRow } from '../sim-row.js'
import { judgedFeedback, type Feedback } from '../types.js'

export interface ScaleLine {
  /** Allowed 429s = min(UB at k, max(shareOfUb × UB at k = 1, clients × perClient)); undefined: "no more than UB at k". */
  shareOfUb?: number
  perClient?: number
  /** Completion limit as a multiple of the oracle's. */
  oracleLimit: number
  /** Status-only cells also need fewer 429s than this peer (at the same k). */
  peer?: string
}

const STEPPED = 'token-bucket-stepped'

/** The default's lines (atb), per refill and feedback mode. */
export function atbScaleLine(server: string, given: Feedback): ScaleLine | undefined {
  const feedback = judgedFeedback(given)
  const stepped = server === STEPPED
  if (feedback === 'status-only') {
    return stepped
      ? { shareOfUb: 0.25, perClient: 1, oracleLimit: 1.25, peer: 'aws-adaptive' }
      : { shareOfUb: 0.1, perClient: 1, oracleLimit: 1.15, peer: 'aws-adaptive' }
  }
  if (stepped && (feedback === 'retry-after' || feedback === 'ratelimit')) return { oracleLimit: 1.1 }
  if (feedback === 'retry-after') return { shareOfUb: 0.03, perClient: 1, oracleLimit: 1.15 }
  if (feedback === 'ratelimit') return { shareOfUb: 0.01, perClient: 0.1, oracleLimit: 1.1 }
  return undefined
}

/** AATB's own, tighter status-only lines (3% continuous, 10% stepped); atb's lines elsewhere. */
export function aatbScaleLine(server: string, feedback: Feedback): ScaleLine | undefined {
  if (feedback !== 'status-only') return atbScaleLine(server, feedback)
  return server === STEPPED
    ? { shareOfUb: 0.1, perClient: 1, oracleLimit: 1.25, peer: 'aws-adaptive' }
    : { shareOfUb: 0.03, perClient: 1, oracleLimit: 1.15, peer: 'aws-adaptive' }
}

export function scaleLineFor(strategy: string): ((server: string, feedback: Feedback) => ScaleLine | undefined) | undefined {
  if (strategy === 'atb' || isKnownScale(strategy)) return atbScaleLine
  if (strategy === 'aatb') return aatbScaleLine
  return undefined
}

export interface ScaleCell {
  scenario: string
  scale: number
  server: string
  feedback: Feedback
  clientModel: string
  strategy: string
  clients: number
  requests: number
  throttled: number
  throttledCi95: number
  ubThrottled: number
  /** UB's 429s on the same cell at k = 1 (what the share is taken of). */
  ubThrottledAtK1: number | undefined
  peerThrottled: number | undefined
  allowedThrottled: number | undefined
  oracleRatio: number
  oracleRatioCi95: number
  oracleLimit: number | undefined
  incompleteRuns: number
  /** What failed: `429s`, `time`, `vs aws-adaptive`, `incomplete`, `no k = 1 row`. Empty on a pass. */
  misses: string[]
  /** Undefined where the strategy has no line for this cell. */
  pass: boolean | undefined
}

/** One cell of a grid across strategies and scales: scenario, server, feedback, client model. */
export const cellKey = (r: { scenario: string; server: string; feedback: Feedback; clientModel: string }) => `${r.scenario}|${r.server}|${r.feedback}|${r.clientModel}`

/** Every row of `strategy`, judged by its scale lines (figures only for a strategy with none). */
export function judgeScale(rows: readonly SimRow[], strategy: string): ScaleCell[] {
  const lineOf = scaleLineFor(strategy)
  const byKey = new Map<string, SimRow>()
  for (const r of rows) byKey.set(`${cellKey(r)}|${r.scale ?? 1}|${r.strategy}`, r)
  const at = (r: SimRow, scale: number, name: string) => byKey.get(`${cellKey(r)}|${scale}|${name}`)
  return rows
    .filter((r) => r.strategy === strategy)
    .map((r) => {
      const scale = r.scale ?? 1
      const line = lineOf?.(r.server, r.feedback)
      const ubAtK1 = at(r, 1, REFERENCE_STRATEGY)?.throttledMean
      const peer = line?.peer === undefined ? undefined : at(r, scale, line.peer)
      const misses: string[] = []
      let allowed: number | undefined
      if (line) {
        if (line.shareOfUb === undefined) allowed = r.ubThrottledMean
        else if (ubAtK1 === undefined) misses.push('no k = 1 row')
        else allowed = Math.min(r.ubThrottledMean, Math.max(line.shareOfUb * ubAtK1, r.clients * (line.perClient ?? 0)))
        if (allowed !== undefined && r.throttledMean > allowed) misses.push('429s')
        if (r.oracleRatio > line.oracleLimit) misses.push('time')
        if (peer && !(r.throttledMean < peer.throttledMean || (r.throttledMean === 0 && peer.throttledMean === 0))) misses.push(`vs ${line.peer}`)
        if (r.incompleteRuns > 0) misses.push('incomplete')
      }
      return {
        scenario: r.scenario,
        scale,
        server: r.server,
        feedback: r.feedback,
        clientModel: r.clientModel,
        strategy,
        clients: r.clients,
        requests: r.requests,
        throttled: r.throttledMean,
        throttledCi95: r.throttledCi95,
        ubThrottled: r.ubThrottledMean,
        ubThrottledAtK1: ubAtK1,
        peerThrottled: peer?.throttledMean,
        allowedThrottled: allowed,
        oracleRatio: r.oracleRatio,
        oracleRatioCi95: r.oracleRatioCi95,
        oracleLimit: line?.oracleLimit,
        incompleteRuns: r.incompleteRuns,
        misses,
        pass: line ? misses.length === 0 : undefined,
      }
    })
}

export interface ScaleFreeBreak {
  cell: ScaleCell
  /** The same cell at k = 1, which passed. */
  atK1: ScaleCell
}

/** Cells that pass at k = 1 and miss at another k: what "scale-free" rules out. */
export function scaleFreeBreaks(cells: readonly ScaleCell[]): ScaleFreeBreak[] {
  const atK1 = new Map(cells.filter((c) => c.scale === 1).map((c) => [cellKey(c), c]))
  const breaks: ScaleFreeBreak[] = []
  for (const cell of cells) {
    const base = atK1.get(cellKey(cell))
    if (cell.scale !== 1 && base?.pass === true && cell.pass === false) breaks.push({ cell, atK1: base })
  }
  return breaks
}

export interface WorseThanK1 {
  cell: ScaleCell
  atK1: ScaleCell
  /** `429s` and/or `time`, each beyond the 95% interval of the difference; `incomplete`. */
  worse: string[]
}

/**
 * Cells whose 429s or completion ÷ oracle are worse than the same cell at k = 1 by more
 * than the 95% interval of the difference (√(ci₁² + ci_k²)), or that did not complete:
 * the concurrent grid's line ("no cell worse than at k = 1"), for any strategy.
 */
export function worseThanK1(cells: readonly ScaleCell[]): WorseThanK1[] {
  const atK1 = new Map(cells.filter((c) => c.scale === 1).map((c) => [cellKey(c), c]))
  const out: WorseThanK1[] = []
  for (const cell of cells) {
    const base = atK1.get(cellKey(cell))
    if (cell.scale === 1 || !base) continue
    const worse: string[] = []
    if (cell.throttled - base.throttled > Math.hypot(cell.throttledCi95, base.throttledCi95)) worse.push('429s')
    if (cell.oracleRatio - base.oracleRatio > Math.hypot(cell.oracleRatioCi95, base.oracleRatioCi95)) worse.push('time')
    if (cell.incompleteRuns > 0) worse.push('incomplete')
    if (worse.length > 0) out.push({ cell, atK1: base, worse })
  }
  return out
}
