// The AATB strategies: `aatb()` is polite-fetch's telemetry-assisted pacer; `paperAatb()`
// is the paper's algorithm (AATB.py) with its evaluation constants.
//
// `aatb()` is the default `atb()` plus the fleet's view. Without aggregates (telemetry
// off, down, slow or stale) it IS the default ATB: every call goes to the inner pacer.
// With a fresh aggregate that says the fleet is congested (someone reported a 429 within
// `congestionHoldMs`, or we saw one ourselves), the lane also paces at its fair share
// of the scope's known quota rate among the active clients (weighted by backlog, as the
// server computes it) — instead of the paper's ~30 s pause of every client whenever
// anyone reported a 429 (findings.md §4: that pause costs completion time).
//
// Bounded influence: an aggregate can hold back the next attempt by at most
// `maxAggregatePauseMs` after the previous send unless a local 429 within
// `confirmWindowMs` confirms the congestion (then at most `maxConfirmedPauseMs`), so a
// wrong or hostile aggregate cannot stall a client that the API itself still admits.
import type { Aggregate, Pacer, PacerInit, PacerReport, PacerState, Signal, Strategy } from '../types.js'
import { resolveAatbOptions, type AatbOptions, type ResolvedAatbOptions } from './aatb-options.js'
import { createPaperAatbPacer, PAPER_AATB_DEFAULTS, PAPER_AATB_KIND, type PaperAatbOptions } from './aatb-paper.js'
import { createReportCounter } from './aatb-report.js'
import { atb } from './atb.js'
import { matchingState, pastTime } from './pacer-state.js'

export type { AatbOptions } from './aatb-options.js'
export { AATB_DEFAULTS } from './aatb-options.js'
export type { PaperAatbOptions } from './aatb-paper.js'
export { PAPER_AATB_DEFAULTS } from './aatb-paper.js'

export const AATB_KIND = 'aatb'
const STATE_VERSION = 1

/** polite-fetch's telemetry-assisted strategy. Strategy name `aatb`. */
export function aatb(options: AatbOptions = {}): Strategy {
  const resolved = resolveAatbOptions(options)
  const inner = atb(resolved.atb)
  return {
    name: AATB_KIND,
    create: (init: PacerInit): Pacer => createAatbPacer(resolved, inner, init),
  }
}

/** The paper's AATB (AATB.py with configs/AATB/config1.json). Strategy name `aatb-paper`. */
export function paperAatb(options: PaperAatbOptions = {}): Strategy {
  const resolved = { ...PAPER_AATB_DEFAULTS }
  for (const key of Object.keys(PAPER_AATB_DEFAULTS) as (keyof PaperAatbOptions)[]) {
    const value = options[key]
    if (typeof value === 'number' && Number.isFinite(value)) resolved[key] = value
  }
  return {
    name: PAPER_AATB_KIND,
    create: (init: PacerInit): Pacer => createPaperAatbPacer(resolved, init),
  }
}

/** An aggregate is used only if it is internally sane (the link validates too; the simulator may not). */
export function isSaneAggregate(aggregate: Aggregate): boolean {
  const finiteNonNegative = (value: number) => typeof value === 'number' && Number.isFinite(value) && value >= 0
  const optionalPositive = (value: number | undefined) => value === undefined || (finiteNonNegative(value) && value > 0)
  return finiteNonNegative(aggregate.activeClients) && aggregate.activeClients >= 1 &&
    finiteNonNegative(aggregate.totalAttempts) && finiteNonNegative(aggregate.throttledReports) &&
    finiteNonNegative(aggregate.windowMs) &&
    optionalPositive(aggregate.quotaPerSecond) && optionalPositive(aggregate.fairSharePerSecond)
}

function createAatbPacer(o: ResolvedAatbOptions, inner: Strategy, init: PacerInit): Pacer {
  const now0 = init.now
  const saved = matchingState(init.state, AATB_KIND, STATE_VERSION)
  const innerState = saved && typeof saved.inner === 'object' && saved.inner !== null ? (saved.inner as PacerState) : undefined
  const base = inner.create(innerState ? { ...init, state: innerState } : { now: init.now, random: init.random })
  const reports = createReportCounter({
    reportWindowMs: o.reportWindowMs,
    throttleReportIntervalMs: o.throttleReportIntervalMs,
    idleAfterMs: o.idleAfterMs,
  })

  let aggregate: Aggregate | undefined
  let aggregateAt = -Infinity
  let lastFleetCongestionAt = -Infinity
  let lastLocalThrottleAt = -Infinity
  let lastSendAt = -Infinity

  if (saved) {
    lastLocalThrottleAt = pastTime(saved.lastLocalThrottleAt, now0) ?? -Infinity
    lastSendAt = pastTime(saved.lastSendAt, now0) ?? -Infinity
    // Aggregates are not persisted: after a restart we wait for a fresh one.
  }

  /** Fair share (units/s) the lane must keep to now, or undefined when the fleet's view does not apply. */
  function fairShare(now: number): number | undefined {
    if (!aggregate || now - aggregateAt > o.aggregateTtlMs) return undefined
    const congested = now - lastFleetCongestionAt < o.congestionHoldMs || now - lastLocalThrottleAt < o.confirmWindowMs
    if (!congested) return undefined
    const share = aggregate.fairSharePerSecond ??
      (aggregate.quotaPerSecond !== undefined ? aggregate.quotaPerSecond / Math.max(1, aggregate.activeClients) : undefined)
    return share !== undefined && share > 0 && Number.isFinite(share) ? share : undefined
  }

  function fleetDelayMs(now: number, cost: number): number {
    const share = fairShare(now)
    if (share === undefined) return 0
    const confirmed = now - lastLocalThrottleAt < o.confirmWindowMs
    const bound = confirmed ? o.maxConfirmedPauseMs : o.maxAggregatePauseMs
    const spacingMs = Math.min((Math.max(cost, 0) * 1000) / share, bound)
    return Math.max(0, lastSendAt + spacingMs - now)
  }

  const pacer: Pacer = {
    delayMs(now, cost) {
      return Math.max(base.delayMs(now, cost), fleetDelayMs(now, cost))
    },
    onSend(now, cost) {
      base.onSend(now, cost)
      reports.onSend(now, cost)
      lastSendAt = now
    },
    onResult(now, signal: Signal) {
      base.onResult(now, signal)
      reports.onResult(now, signal)
      if (signal.kind === 'throttled') lastLocalThrottleAt = now
    },
    toJSON(now): PacerState {
      const state: PacerState = { kind: AATB_KIND, version: STATE_VERSION, savedAt: now, inner: base.toJSON(now) }
      if (Number.isFinite(lastLocalThrottleAt)) state.lastLocalThrottleAt = lastLocalThrottleAt
      if (Number.isFinite(lastSendAt)) state.lastSendAt = lastSendAt
      return state
    },
    onAggregate(now, next) {
      if (!isSaneAggregate(next)) return
      aggregate = { ...next }
      aggregateAt = now
      if (next.throttledReports > 0) lastFleetCongestionAt = now
    },
    reportDueAt: (now, backlog) => reports.dueAt(now, backlog),
    takeReport: (now): PacerReport | undefined => reports.take(now),
    get ratePerSecond() {
      // Read-only view: uses the latest aggregate without a clock, as of when it arrived.
      const share = aggregate ? fairShare(aggregateAt) : undefined
      return share === undefined ? base.ratePerSecond : Math.min(base.ratePerSecond, share)
    },
    tokens: (now) => base.tokens(now),
  }
  if (base.retryDelayMs) {
    const retry = base.retryDelayMs.bind(base)
    pacer.retryDelayMs = (now, failures, signal) => retry(now, failures, signal)
  }
  return pacer
}
