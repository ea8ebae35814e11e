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
import { createAtbPacer } from './atb-adaptive.js'
import { resolveAtbOptions, type ResolvedAtbOptions } from './atb-options.js'
import { matchingState, pastTime } from './pacer-state.js'

export type { AatbOptions } from './aatb-options.js'
export { AATB_DEFAULTS } from './aatb-options.js'
export type { PaperAatbOptions } from './aatb-paper.js'
export { PAPER_AATB_DEFAULTS } from './aatb-paper.js'

export const AATB_KIND = 'aatb'
const STATE_VERSION = 1
/** Time constant of the lane's own admitted rate, which bounds how far the fleet may hurry it. */
const ADMITTED_TAU_MS = 60_000
const HURRY_ADMITTED_FACTOR = 3

/** polite-fetch's telemetry-assisted strategy. Strategy name `aatb`. */
export function aatb(options: AatbOptions = {}): Strategy {
  const resolved = resolveAatbOptions(options)
  const innerOptions = resolveAtbOptions(resolved.atb)
  return {
    name: AATB_KIND,
    create: (init: PacerInit): Pacer => createAatbPacer(resolved, innerOptions, init),
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

function createAatbPacer(o: ResolvedAatbOptions, innerOptions: ResolvedAtbOptions, init: PacerInit): Pacer {
  const now0 = init.now
  const saved = matchingState(init.state, AATB_KIND, STATE_VERSION)
  const innerState = saved && typeof saved.inner === 'object' && saved.inner !== null ? (saved.inner as PacerState) : undefined
  const base = createAtbPacer(innerOptions, innerState ? { ...init, state: innerState } : { now: init.now, random: init.random })
  const reports = createReportCounter({
    reportWindowMs: o.reportWindowMs,
    throttleReportIntervalMs: o.throttleReportIntervalMs,
    idleAfterMs: o.idleAfterMs,
  })

  let aggregate: Aggregate | undefined
  let aggregateAt = -Infinity
  let lastFleetCongestionAt = -Infinity
  let lastLocalThrottleAt = -Infinity
  let lastLocalSuccessAt = -Infinity
  let lastSendAt = -Infinity
  /** The lane sent while the inner ATB still wanted it to wait (the fleet's share hurried it). */
  let hurried = false
  /** A fleet-idle probe was sent since the last local 429 (at most one per dry spell). */
  let idleProbeSent = false
  let idleProbePending = false
  /** Successes, decayed with time constant ADMITTED_TAU_MS: the lane's own admitted rate. */
  let admittedScore = 0
  let admittedScoreAt = now0

  if (saved) {
    lastLocalThrottleAt = pastTime(saved.lastLocalThrottleAt, now0) ?? -Infinity
    lastSendAt = pastTime(saved.lastSendAt, now0) ?? -Infinity
    // Aggregates are not persisted: after a restart we wait for a fresh one.
  }

  function admittedPerSecond(now: number): number {
    const decayed = admittedScore * Math.exp(-Math.max(0, now - admittedScoreAt) / ADMITTED_TAU_MS)
    return decayed / (ADMITTED_TAU_MS / 1000)
  }

  /** Fleet attempts per second over the aggregate's window, as a fraction of the quota rate. */
  function fleetLoad(a: Aggregate): number | undefined {
    if (a.quotaPerSecond === undefined || !(a.windowMs > 0)) return undefined
    return a.totalAttempts / (a.windowMs / 1000) / a.quotaPerSecond
  }

  /** The latest aggregate while it is fresh (telemetry down or slow: undefined, pure ATB). */
  function freshAggregate(now: number): Aggregate | undefined {
    return aggregate !== undefined && now - aggregateAt <= o.aggregateTtlMs ? aggregate : undefined
  }

  /** Fair share (units/s) the lane must keep to now, or undefined when the fleet's view does not apply. */
  function fairShare(now: number): number | undefined {
    const fresh = freshAggregate(now)
    if (!fresh) return undefined
    const congested = now - lastFleetCongestionAt < o.congestionHoldMs || now - lastLocalThrottleAt < o.confirmWindowMs
    if (!congested) return undefined
    const share = fresh.fairSharePerSecond ??
      (fresh.quotaPerSecond !== undefined ? fresh.quotaPerSecond / Math.max(1, fresh.activeClients) : undefined)
    return share !== undefined && share > 0 && Number.isFinite(share) ? share : undefined
  }

  function fleetDelayMs(now: number, cost: number): number {
    const share = fairShare(now)
    if (share === undefined) return 0
    const confirmed = now - lastLocalThrottleAt < o.confirmWindowMs
    const bound = confirmed ? o.maxConfirmedPauseMs : o.maxAggregatePauseMs
    const spacingMs = Math.min((Math.max(cost, 0) * 1000) / (share * o.shareMargin), bound)
    return Math.max(0, lastSendAt + spacingMs - now)
  }

  /** Whether the lane may be hurried now: not dry, or the fleet left the quota unused since it went dry. */
  function mayHurry(): boolean {
    if (lastLocalSuccessAt > lastLocalThrottleAt) return true
    // Dry (its last answer was a 429): the quota may refill in a step, and the inner ATB backs off
    // steeply. An aggregate received since, showing the fleet left most of the quota unused, says
    // the quota has been refilling: one probe at the share, not ATB's long back-off.
    if (idleProbeSent || aggregate === undefined || !(aggregateAt > lastLocalThrottleAt)) return false
    const load = fleetLoad(aggregate)
    return load !== undefined && load < o.idleFraction
  }

  /**
   * The lane's fair fraction of the quota while a fresh aggregate gives one: the server's
   * backlog-weighted share, or an equal split among the active clients. It tells the inner
   * ATB's quota share the lane's fair turn, which it otherwise guesses (see fleetTurnMs in
   * atb-quota.ts). Unlike the fair-share pacing below it applies without congestion: it only
   * ever shortens a spacing the quota share would otherwise stretch to its fixed caps.
   */
  function fleetFraction(now: number): number | undefined {
    const fresh = freshAggregate(now)
    if (!fresh) return undefined
    const { fairSharePerSecond: share, quotaPerSecond: quota } = fresh
    const fraction = share !== undefined && quota !== undefined ? share / quota : 1 / Math.max(1, fresh.activeClients)
    return fraction > 0 && fraction <= 1 ? fraction : undefined
  }

  /**
   * The inner ATB's delay. While the fleet's share applies, ATB's own status-only inference may
   * not hold the lane back beyond its share: after a dry spell ATB cuts its rate to a fraction
   * of the share (or ×1/8 when a retry failed too) and regains it at 2%/s, which left a stepped
   * quota's next step half unused. Server guidance (a Retry-After gate, a quota spread) is never
   * shortened by the hurry (the quota spread learns the lane's turn from `fleetShare`). Hurrying is bounded by what the lane itself got through (3 × its admitted rate).
   */
  function innerDelayMs(now: number, cost: number): number {
    base.fleetShare = fleetFraction(now)
    let delay = base.delayMs(now, cost)
    if (delay <= 0) return delay
    const rate = base.ratePerSecond
    if (!(rate > 0) || !Number.isFinite(rate)) return delay
    const units = Math.max(0, cost)
    const pacingMs = Math.ceil(Math.max(0, ((units - base.tokens(now)) / rate) * 1000))
    if (delay > pacingMs + 1) return delay // a gate or a quota spread: the server's word, not inference
    if (hurried) {
      // The inner bucket is in debt for sends the fleet's share allowed: forgive it, so ATB
      // waits at most one of its own spacings (from the last send or 429), not the debt too.
      const since = Math.max(lastSendAt, lastLocalThrottleAt)
      delay = Math.min(delay, Math.ceil(Math.max(0, since + (Math.min(units, 1) * 1000) / rate - now)))
    }
    const share = fairShare(now)
    if (share === undefined || !mayHurry()) return delay
    const hurryRate = Math.min(share, HURRY_ADMITTED_FACTOR * admittedPerSecond(now))
    if (!(hurryRate > 0)) return delay
    const hurryMs = Math.ceil(Math.max(0, lastSendAt + (units * 1000) / hurryRate - now))
    return Math.min(delay, hurryMs)
  }

  const pacer: Pacer = {
    delayMs(now, cost) {
      return Math.max(innerDelayMs(now, cost), fleetDelayMs(now, cost))
    },
    onSend(now, cost) {
      base.fleetShare = fleetFraction(now)
      if (base.delayMs(now, cost) > 0) {
        hurried = true
        if (!(lastLocalSuccessAt > lastLocalThrottleAt)) idleProbePending = true
      }
      base.onSend(now, cost)
      reports.onSend(now, cost)
      lastSendAt = now
    },
    onResult(now, signal: Signal) {
      base.onResult(now, signal)
      reports.onResult(now, signal)
      if (signal.kind === 'throttled') {
        lastLocalThrottleAt = now
        // The probe the fleet's idle view allowed found the quota dry: no more such probes until a success.
        if (idleProbePending) idleProbeSent = true
        idleProbePending = false
      } else if (signal.kind === 'ok') {
        lastLocalSuccessAt = now
        idleProbeSent = false
        idleProbePending = false
        admittedScore = admittedScore * Math.exp(-Math.max(0, now - admittedScoreAt) / ADMITTED_TAU_MS) + 1
        admittedScoreAt = now
      }
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
      if (next.throttledReports > 0) {
        lastFleetCongestionAt = now
      } else if (Number.isFinite(lastFleetCongestionAt)) {
        // A fleet that was congested and still spends most of the quota stays congested: ending
        // its fair shares after the hold let every lane probe the quota again, a 429 per lane.
        const load = fleetLoad(next)
        if (load !== undefined && load >= o.busyFraction) lastFleetCongestionAt = now
      }
    },
    reportDueAt: (now, backlog) => reports.dueAt(now, backlog),
    takeReport: (now): PacerReport | undefined => reports.take(now),
    get ratePerSecond() {
      // Read-only view: uses the latest aggregate without a clock, as of when it arrived.
      const share = aggregate ? fairShare(aggregateAt) : undefined
      return share === undefined ? base.ratePerSecond : Math.min(base.ratePerSecond, share * o.shareMargin)
    },
    tokens: (now) => base.tokens(now),
  }
  if (base.retryDelayMs) {
    const retry = base.retryDelayMs.bind(base)
    pacer.retryDelayMs = (now, failures, signal) => retry(now, failures, signal)
  }
  return pacer
}
