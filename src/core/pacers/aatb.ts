// The AATB strategies: `aatb()` is polite-fetch's telemetry-assisted pacer; `paperAatb()`
// is the paper's algorithm (AATB.py) with its evaluation constants.
//
// `aatb()` is the default `atb()` plus the fleet's view. Without aggregates (telemetry
// off, down, slow or stale) it IS the default ATB: every call goes to the inner pacer.
// With a fresh aggregate that says the fleet is congested (someone reported a 429 within the
// congestion hold, or we saw one ourselves), the lane also paces at its fair share
// of the scope's known quota rate among the active clients (weighted by backlog, as the
// server computes it) — instead of the paper's ~30 s pause of every client whenever
// anyone reported a 429 (findings.md §4: that pause costs completion time).
//
// Bounded influence, in the lane's own evidence (aatb-evidence.ts): an aggregate can space
// the lane's sends at most TRUST_FACTOR × the lane's own admission spacing (the mean interval
// between its last admissions), and every admission of a send made sooner than the
// aggregate's share asked refutes it: after EVIDENCE_COUNT of them in a row, with no local
// 429 among them, the aggregate holds the lane back no more until the lane itself meets a
// 429. So a wrong or hostile aggregate cannot stall a lane the API still admits, and an
// honest one can pace a lane at any fair spacing the API's admissions bear out (40 clients
// on 2 per minute: 1,200 s).
//
// Every other time AATB decides with is the fleet's or the lane's, never a fixed duration: the
// report period and the hold before a lane has a spacing of its own are the aggregator's window
// (each aggregate carries it), the congestion hold is AATB_CONSTANTS.congestionHoldPeriods of the
// longer of that window and the fair spacing the aggregate implies, an aggregate is stale after
// `staleReports` reports went unanswered, and a lane is idle once it has nothing to report.
import type { Aggregate, Pacer, PacerInit, PacerReport, PacerState, Signal, Strategy } from '../types.js'
import { AATB_CONSTANTS, resolveAatbOptions, type AatbOptions, type ResolvedAatbOptions } from './aatb-options.js'
import { createPaperAatbPacer, PAPER_AATB_DEFAULTS, PAPER_AATB_KIND, type PaperAatbOptions } from './aatb-paper.js'
import { createLaneEvidence, EVIDENCE_COUNT } from './aatb-evidence.js'
import { createReportCounter } from './aatb-report.js'
import { createAtbPacer, MEASURED_QUOTA_PER_SECOND } from './atb-adaptive.js'
import { resolveAtbOptions, type ResolvedAtbOptions } from './atb-options.js'
import { matchingState, pastTime } from './pacer-state.js'

export type { AatbOptions } from './aatb-options.js'
export { AATB_DEFAULTS } from './aatb-options.js'
export type { PaperAatbOptions } from './aatb-paper.js'
export { PAPER_AATB_DEFAULTS } from './aatb-paper.js'

export const AATB_KIND = 'aatb'
const STATE_VERSION = 1
/**
 * The fleet may hurry a lane to at most this many times its own admitted rate, and hold it to
 * at most this many times its own admission spacing: an aggregate moves the lane within a
 * factor of what the API has shown it, never to a pace the lane has no evidence for.
 */
const TRUST_FACTOR = 3
/**
 * How far below its fair share a lane's admitted rate may be before the fleet's quota rate counts
 * only in proportion for its time scale (fleetTimeScale). Light lanes are admitted far below their
 * share honestly (scale grid, seeds 1–5): at 3 (the hurry's factor) the k = 1 rows lost 2 cells and k = 10/60
 * 7 (236 of 360 cells against 250 unbounded), at 10 248; at 30 none. The hostile aggregate of
 * test/core/pacers/aatb.test.ts (a share of 10⁹/s for a lane admitted at 0.05/s) still cannot
 * hurry the lane past 3 × its admitted rate at 30, and can at 100.
 */
const FLEET_SCALE_TRUST = 30

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

/**
 * The quota's time scale the fleet's quota rate implies (1 = the paper's 100 per 75 s), for the
 * inner ATB: every lane of the fleet reads the same one, where each lane's own reading of how long
 * the quota lasted scatters (and lanes of one fleet on different scales do worse than all on the
 * same wrong one). Bounded by the lane's own evidence, both ways:
 * - the fleet's quota is no smaller than what the API admits this lane alone, so an aggregate
 *   claiming a tiny quota cannot stretch the lane's durations past what its admissions allow;
 * - an aggregate whose share for the lane is more than FLEET_SCALE_TRUST × what the API admits
 *   it claims more than the lane's evidence bears, and its quota counts only in that proportion,
 *   so one claiming a huge quota cannot shrink the lane's durations (a calm lane paces nothing)
 *   past what lets it hurry the lane's sends beyond the aggregate's bound. A lane with no
 *   admissions yet takes the fleet's word, as it takes its share.
 */
export function fleetTimeScale(quotaPerSecond: number, sharePerSecond: number | undefined, admittedPerSecond: number): number {
  const own = Number.isFinite(admittedPerSecond) ? admittedPerSecond : 0
  const trust = sharePerSecond === undefined || !(own > 0) ? 1 : Math.min(1, (FLEET_SCALE_TRUST * own) / sharePerSecond)
  return MEASURED_QUOTA_PER_SECOND / Math.max(quotaPerSecond * trust, own)
}

/** The AATB pacer over every value it decides with (options and internal constants, resolved). */
export function createAatbPacer(o: ResolvedAatbOptions, innerOptions: ResolvedAtbOptions, init: PacerInit): Pacer {
  const now0 = init.now
  const saved = matchingState(init.state, AATB_KIND, STATE_VERSION)
  const innerState = saved && typeof saved.inner === 'object' && saved.inner !== null ? (saved.inner as PacerState) : undefined
  const base = createAtbPacer(innerOptions, innerState ? { ...init, state: innerState } : { now: init.now, random: init.random })
  let aggregate: Aggregate | undefined
  let aggregateAt = -Infinity
  /** Reports taken since the latest aggregate arrived (each normally answered by the next one). */
  let unansweredReports = 0
  /** The congestion hold the aggregate that last said "congested" implies. */
  let congestionHoldMs = 0
  const reports = createReportCounter({ periodMs: windowMs })
  let lastFleetCongestionAt = -Infinity
  let lastLocalThrottleAt = -Infinity
  let lastLocalSuccessAt = -Infinity
  let lastSendAt = -Infinity
  /** The lane sent while the inner ATB still wanted it to wait (the fleet's share hurried it). */
  let hurried = false
  /** A fleet-idle probe was sent since the last local 429 (at most one per dry spell). */
  let idleProbeSent = false
  let idleProbePending = false
  /** The lane's own admissions, sends and 429s: what bounds the aggregate's influence. */
  const evidence = createLaneEvidence()
  /** Sends in flight that went sooner than the aggregate's share asked. */
  let earlySendsInFlight = 0
  /** Admissions in a row of sends the aggregate said were too early (no local 429 between). */
  let refutations = 0
  /**
   * Sends in flight kept out of the evidence: early ones the aggregate spaced before the lane had a
   * spacing of its own, and those the server's count made room for (serverCountAllows).
   */
  let unevidencedInFlight = 0
  /** The lump the server named last: its time, and how far ahead of the 429 it was named. */
  let lumpAt = Infinity
  let lumpNamedAheadMs = 0

  if (saved) {
    lastLocalThrottleAt = pastTime(saved.lastLocalThrottleAt, now0) ?? -Infinity
    lastSendAt = pastTime(saved.lastSendAt, now0) ?? -Infinity
    // Aggregates are not persisted: after a restart we wait for a fresh one.
  }

  /** The aggregator's window (the report period): given by the latest aggregate, the option until one came. */
  function windowMs(): number {
    return aggregate !== undefined && aggregate.windowMs > 0 ? aggregate.windowMs : o.reportWindowMs
  }

  /** The aggregate's fair share (units/s): the server's backlog-weighted one, or an equal split of the quota. */
  function shareOf(a: Aggregate): number | undefined {
    const share = a.fairSharePerSecond ?? (a.quotaPerSecond !== undefined ? a.quotaPerSecond / Math.max(1, a.activeClients) : undefined)
    return share !== undefined && share > 0 && Number.isFinite(share) ? share : undefined
  }

  /** How long a congested aggregate keeps the fleet congested: a number of the fleet's own periods. */
  function holdMsOf(a: Aggregate): number {
    const share = shareOf(a)
    const fairSpacingMs = share === undefined ? 0 : 1000 / share
    return AATB_CONSTANTS.congestionHoldPeriods * Math.max(a.windowMs, fairSpacingMs)
  }

  /** Fleet attempts per second over the aggregate's window, as a fraction of the quota rate. */
  function fleetLoad(a: Aggregate): number | undefined {
    if (a.quotaPerSecond === undefined || !(a.windowMs > 0)) return undefined
    return a.totalAttempts / (a.windowMs / 1000) / a.quotaPerSecond
  }

  /**
   * The latest aggregate while it is fresh: no more than a few reports went out since it came
   * without an answer (telemetry down or slow: undefined, pure ATB). Counted in the lane's own
   * reports, not in seconds: a lane that sends nothing has nothing to report and keeps its view.
   */
  function freshAggregate(_now: number): Aggregate | undefined {
    return aggregate !== undefined && unansweredReports < AATB_CONSTANTS.staleReports ? aggregate : undefined
  }

  /** Fair share (units/s) the lane must keep to now, or undefined when the fleet's view does not apply. */
  function fairShare(now: number): number | undefined {
    const fresh = freshAggregate(now)
    if (!fresh) return undefined
    const congested = now - lastFleetCongestionAt < congestionHoldMs || evidence.sendsSinceThrottle < EVIDENCE_COUNT
    if (!congested) return undefined
    return shareOf(fresh)
  }

  /** The aggregate's share while it holds influence over the lane (not refuted by the lane's admissions). */
  function holdingShare(now: number): number | undefined {
    return refutations >= EVIDENCE_COUNT ? undefined : fairShare(now)
  }

  /**
   * Whether the server's own count leaves this lane room now: its fair fraction of the units a
   * live RateLimit hint says are left covers what it sent since, plus this send. The share is the
   * fleet's estimate of a rate; the count is the server's word on what is there. A stepped quota
   * hands out its units in lumps, and a fleet holding to its shares left each step's surplus and
   * the run's tail to come back at the quota's rate: 1.12–1.30 × the oracle's time on a stepped
   * bucket with RateLimit headers, where Retry-After-honouring exponential backoff spends each
   * step at once (1.00 ×). The fractions add up to one, so the fleet together spends no more than
   * the count; the inner ATB (its quota share) still paces the lane.
   */
  function serverCountAllows(now: number, cost: number): boolean {
    const count = base.serverCount(now)
    const fraction = count === undefined ? undefined : fleetFraction(now)
    return count !== undefined && fraction !== undefined && fraction * count.remaining - count.sentSince >= Math.max(cost, 1)
  }

  function fleetDelayMs(now: number, cost: number): number {
    const share = holdingShare(now)
    if (share === undefined || serverCountAllows(now, cost) || spendsLumpPart(now, cost)) return 0
    const ownSpacingMs = evidence.spacingMs()
    // Before a lane has a spacing of its own (two sends) the bound is in aggregator windows: the
    // cadence at which the lane hears the fleet. Admitted, such a send refutes it all the same.
    const boundMs = TRUST_FACTOR * (ownSpacingMs ?? windowMs())
    const spacingMs = Math.min((Math.max(cost, 0) * 1000) / (share * o.shareMargin), boundMs)
    return Math.max(0, lastSendAt + spacingMs - now)
  }

  /**
   * Whether the fleet share yields to the named lump the inner ATB is spending: the lane's fair part
   * of it (its fraction of what the quota refilled over the time the server named it ahead, a lower
   * bound on the step's interval) holds at least this send. A lane whose part is under one unit
   * keeps to its share: with every lane of a large fleet spending each step as it lands, 100 lanes
   * of 8 requests met the step together (stepped Retry-After, 100c-700: 60 → 373 429s a run, 1.13
   * → 1.20 × the oracle; with this rule 70 and 1.13).
   */
  function spendsLumpPart(now: number, cost: number): boolean {
    if (!base.spendsLump || now < lumpAt) return false
    const fresh = freshAggregate(now)
    const fraction = fleetFraction(now)
    if (fresh?.quotaPerSecond === undefined || fraction === undefined) return true
    const part = fraction * fresh.quotaPerSecond * (lumpNamedAheadMs / 1000)
    return part >= Math.max(cost, 1)
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
   * shortened by the hurry (the quota spread learns the lane's turn from `fleetShare`). Hurrying is
   * bounded by what the lane itself got through (TRUST_FACTOR × its admitted rate).
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
    const hurryRate = Math.min(share, TRUST_FACTOR * evidence.admittedPerSecond(now))
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
      // Sooner than the aggregate's share (not its margin) asked: if the API admits it, that refutes the aggregate.
      const share = holdingShare(now)
      // A send the server's count made room for while the fleet held the lane is the server's
      // word, not the lane's pace: it neither refutes the aggregate (its admission was promised)
      // nor becomes the lane's spacing (a count's burst would read as a spacing of 0 and lift
      // the fleet's hold with it).
      const counted = share !== undefined && serverCountAllows(now, cost)
      const early = !counted && share !== undefined && now + 1 < lastSendAt + (Math.max(cost, 0) * 1000) / share
      if (early) earlySendsInFlight++
      // A send the aggregate spaced before the lane had a spacing of its own (in report windows)
      // measured the aggregate, not the lane: it stays out of the evidence (else a hostile
      // aggregate's first hold would become the lane's "own" spacing and grow from there).
      const unevidenced = share !== undefined && evidence.spacingMs() === undefined
      if ((early && unevidenced) || counted) unevidencedInFlight++
      else evidence.onSend(now)
      base.onSend(now, cost)
      reports.onSend(now, cost)
      lastSendAt = now
    },
    onResult(now, signal: Signal) {
      base.onResult(now, signal)
      reports.onResult(now, signal)
      if (signal.kind === 'throttled') {
        lastLocalThrottleAt = now
        if (signal.retryAt !== undefined && signal.retryAt > now) {
          lumpAt = signal.retryAt
          lumpNamedAheadMs = signal.retryAt - now
        }
        evidence.onThrottled()
        // The lane's own 429 corroborates the fleet's congestion: the aggregate's word counts again.
        refutations = 0
        earlySendsInFlight = Math.max(0, earlySendsInFlight - 1)
        unevidencedInFlight = Math.max(0, unevidencedInFlight - 1)
        // The probe the fleet's idle view allowed found the quota dry: no more such probes until a success.
        if (idleProbePending) idleProbeSent = true
        idleProbePending = false
      } else if (signal.kind === 'ok') {
        lastLocalSuccessAt = now
        idleProbeSent = false
        idleProbePending = false
        if (earlySendsInFlight > 0) {
          earlySendsInFlight--
          refutations++
        }
        if (unevidencedInFlight > 0) unevidencedInFlight--
        else evidence.onAdmitted(now)
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
      if (next.quotaPerSecond !== undefined) {
        base.fleetTimeScale = fleetTimeScale(next.quotaPerSecond, shareOf(next), evidence.admittedPerSecond(now))
        base.fleetQuotaScale = fleetTimeScale(next.quotaPerSecond, undefined, evidence.admittedPerSecond(now))
      }
      aggregate = { ...next }
      aggregateAt = now
      unansweredReports = 0
      if (next.throttledReports > 0) {
        lastFleetCongestionAt = now
        congestionHoldMs = holdMsOf(next)
      } else if (Number.isFinite(lastFleetCongestionAt)) {
        // A fleet that was congested and still spends most of the quota stays congested: ending
        // its fair shares after the hold let every lane probe the quota again, a 429 per lane.
        const load = fleetLoad(next)
        if (load !== undefined && load >= o.busyFraction) {
          lastFleetCongestionAt = now
          congestionHoldMs = holdMsOf(next)
        }
      }
    },
    reportDueAt: (now, backlog) => reports.dueAt(now, backlog),
    takeReport(now): PacerReport | undefined {
      const report = reports.take(now)
      if (report) unansweredReports++
      return report
    },
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
