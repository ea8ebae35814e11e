// The limiter's side of learning route splits from status codes (the rule is pure, in
// core/route-split.ts). From a lane's first 429 on, each attempt's outcome is recorded by
// route. The rule is asked about the route of the lane's latest 429 whenever evidence
// arrives: another 429 of it, or a success of another route.
//
// A shared lane cannot gather that evidence by itself: the route's first 429s cut the
// lane's pacer, and the other routes, queued behind, are then sent too seldom to show
// whether the server still admits them. So as soon as the route was refused and no other
// route was (and another route waits or was admitted since), the route gets a trial lane
// of its own (`scope#~route:…`): one of its jobs tells the shell to send the route's later
// requests there, its waiting and in-flight calls move along, and the old lane's pacer
// (cut by the route's 429s alone) is replaced by a fresh one. The trial lane's pacer
// (core/split-lane-pacer.ts) starts from what the old one learned and still waits for the
// origin's pacer before each send. Both lanes keep recording into one record, so the rule
// sees the order of the answers across them; it then confirms the split (a `split` event)
// or, when the other routes are refused as often as the route, finds a shared quota and
// turns the trial lane joint: a second queue on the origin's pacer. Clean path: one
// property read and one comparison per attempt.
import { RouteOutcomes, type RouteSplitVerdict, splitPolicyName } from '../core/route-split.js'
import { policyScope } from '../core/scope.js'
import { SplitLanePacer } from '../core/split-lane-pacer.js'
import type { Pacer, PacerState, Signal } from '../core/types.js'
import type { Call } from './call.js'
import type { Lane } from './lane.js'
import type { LaneRegistry } from './lane-registry.js'
import type { LimiterEmitter } from './limiter-events.js'
import type { Job } from './limiter-types.js'

export interface SplitHost {
  readonly registry: LaneRegistry
  readonly emitter: LimiterEmitter
  /** Calls with an attempt in flight. */
  runningCalls(): readonly Call<unknown>[]
}

/** A route on trial in a lane of its own, not yet judged. */
interface RouteTrial {
  route: string
  lane: Lane
  pacer: SplitLanePacer | undefined
}

/** What a lane keeps while it is recording (from its first 429 until a quiet stretch). */
export class LaneRouteRecord {
  readonly outcomes = new RouteOutcomes()
  /** The lane the record belongs to (a trial lane shares its origin's record). */
  readonly home: Lane
  /** The route of the lane's latest 429: the one a split would move. */
  candidate: string | undefined = undefined
  /** A job of that route, which knows how to send its route's later requests elsewhere. */
  candidateJob: Job<unknown> | undefined = undefined
  trial: RouteTrial | undefined = undefined
  /**
   * The lane's pacer state just before its first 429 of this record: what the lane knew
   * before the route's 429s cut it. Undefined when the lane had no pacer yet (restoring).
   */
  readonly before: PacerState | undefined
  /** The lane's 429 count when `before` was taken. */
  readonly throttledBefore: number

  constructor(home: Lane, now: number) {
    this.home = home
    this.throttledBefore = home.throttled
    let before: PacerState | undefined
    try {
      before = home.pacer?.toJSON(now)
    } catch {
      before = undefined // a pacer that cannot write its state: the split starts it afresh
    }
    this.before = before
  }
}

/** Whether the attempt's outcome needs a look: the lane is recording, or this is a 429 that may start it. */
export function wantsRouteNote(lane: Lane, signal: Signal): boolean {
  return lane.routeRecord !== undefined || signal.kind === 'throttled'
}

/** Records the outcome of `call`'s attempt in `lane` (the lane it was sent in) and splits a route off when the rule says so. */
export function noteRoute(host: SplitHost, call: Call<unknown>, lane: Lane, signal: Signal, now: number): void {
  const kind = signal.kind
  if (kind !== 'ok' && kind !== 'throttled') return // 503s and network errors say nothing about routes
  let record = lane.routeRecord
  const trial = record?.trial
  if (record !== undefined && trial === undefined && kind === 'ok' && record.outcomes.quiet()) {
    // No 429 for a long stretch of outcomes: back to the clean path.
    lane.routeRecord = undefined
    return
  }
  const job = call.job
  // A trial lane holds one route; its jobs no longer name it (they left their origin's lane).
  const route = trial !== undefined && lane === trial.lane ? trial.route : job.route
  if (typeof route !== 'string' || route.length === 0) return
  if (record === undefined) {
    if (kind !== 'throttled' || typeof job.learnRoute !== 'function') return
    record = lane.routeRecord = new LaneRouteRecord(lane, now)
  }
  record.outcomes.record(route, kind === 'throttled')
  if (trial !== undefined) {
    judgeTrial(host, record, trial, now)
    return
  }
  if (kind === 'throttled') {
    if (typeof job.learnRoute !== 'function') return
    record.candidate = route
    record.candidateJob = job
  } else if (record.candidate === undefined || record.candidate === route) {
    return
  }
  const candidate = record.candidate as string
  const verdict = record.outcomes.verdict(candidate, othersWaiting(host, lane, candidate))
  if (!verdict.split && !verdict.trial) return
  const started = startTrial(host, call, lane, record, candidate, verdict, now)
  if (started !== undefined && verdict.split) end(record, started)
}

function judgeTrial(host: SplitHost, record: LaneRouteRecord, trial: RouteTrial, now: number): void {
  const verdict = record.outcomes.verdict(trial.route)
  if (verdict.shared) {
    // A shared quota after all: the route paces with its origin again.
    if (trial.pacer !== undefined) trial.pacer.joint = true
    end(record, trial)
    registryWake(host, trial.lane, now)
  } else if (verdict.split) {
    end(record, trial)
  }
}

function othersWaiting(host: SplitHost, lane: Lane, route: string): boolean {
  const other = (call: Call<unknown>): boolean => call.lane === lane && typeof call.job.route === 'string' && call.job.route !== route
  return lane.queue.toArray().some(other) || host.runningCalls().some(other)
}

/** Moves `route` (its later requests, queued and in-flight calls) to a lane of its own. */
function startTrial(
  host: SplitHost,
  call: Call<unknown>,
  lane: Lane,
  record: LaneRouteRecord,
  route: string,
  verdict: RouteSplitVerdict,
  now: number,
): RouteTrial | undefined {
  const policy = splitPolicyName(route)
  const learner = record.candidateJob
  record.candidate = undefined
  record.candidateJob = undefined
  try {
    learner?.learnRoute?.(policy)
  } catch {
    return undefined // a shell that cannot route there: keep the lane as it is
  }
  const registry = host.registry
  const target = registry.laneFor(policyScope(lane.scope, policy), now)
  registry.inheritPacer(target, lane, now)
  const moves = (other: Call<unknown>): boolean => other.lane === lane && other.job.route === route

  // The deciding call's attempt has ended; unless already settled, it is about to be retried or finished.
  if (call.state !== 'done' && moves(call)) moveTo(call, target)
  for (const queued of lane.queue.removeWhere(moves)) {
    moveTo(queued, target)
    target.queue.insert(queued)
  }
  // Their 429s would cut the lane's pacer again. Not into a lane still restoring its
  // pacer: an attempt settling there would have no pacer to feed.
  if (target.pacer !== undefined) {
    for (const running of host.runningCalls()) {
      if (running.state !== 'running' || !moves(running)) continue
      lane.inFlight--
      target.inFlight++
      moveTo(running, target)
    }
  }
  // The route's Retry-After gated the lane: the gate goes with the route.
  if (lane.gateUntil > target.gateUntil) target.gateUntil = lane.gateUntil

  let pacer: SplitLanePacer | undefined
  if (target.pacer instanceof SplitLanePacer) pacer = target.pacer
  else if (target.pacer !== undefined) {
    const scope = lane.scope
    pacer = target.pacer = new SplitLanePacer(target.pacer, () => registry.lanes.get(scope)?.pacer)
  }
  // Every 429 the lane's pacer learned from was the route's (the trial's condition): it goes
  // back to what it knew before them. A trial started on the record's first 429 finds the
  // pacer untouched (it learns from an answer only after this).
  const pacerReset = lane.pacer !== undefined && lane.throttled > record.throttledBefore
  if (pacerReset) {
    const previousPerSecond = (lane.pacer as Pacer).ratePerSecond
    const registry = host.registry
    lane.pacer = registry.createPacer(now, record.before)
    lane.gateUntil = 0
    registry.persistence?.markDirty(lane)
    const ratePerSecond = (lane.pacer as Pacer).ratePerSecond
    if (ratePerSecond !== previousPerSecond && host.emitter.has('rate')) {
      host.emitter.emit('rate', { scope: lane.scope, ratePerSecond, previousPerSecond })
    }
  }
  const trial: RouteTrial = { route, lane: target, pacer }
  record.trial = trial
  target.routeRecord = record
  // Pumped from a timer, not here: the limiter is in the middle of settling an attempt.
  registry.scheduleWake(target, now, now)
  registry.scheduleWake(lane, now, now)
  if (host.emitter.has('split')) {
    host.emitter.emit('split', {
      scope: lane.scope,
      splitScope: target.scope,
      route,
      policy,
      throttled: verdict.throttled,
      otherSuccesses: verdict.otherSuccesses,
      pacerReset,
    })
  }
  return trial
}

/** The trial is judged: the route's outcomes leave the record, its lane stops recording. */
function end(record: LaneRouteRecord, trial: RouteTrial): void {
  record.trial = undefined
  record.outcomes.forget(trial.route)
  if (trial.lane.routeRecord === record) trial.lane.routeRecord = undefined
}

function registryWake(host: SplitHost, lane: Lane, now: number): void {
  host.registry.scheduleWake(lane, now, now)
}

function moveTo(call: Call<unknown>, target: Lane): void {
  call.lane = target
  // The job now belongs to the route's lane (and stops counting as the old lane's route).
  call.job.scope = target.scope
}
