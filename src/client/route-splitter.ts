// The limiter's side of learning route splits from status codes (the rule is pure, in
// core/route-split.ts). From a lane's first 429 on, each attempt's outcome is recorded by
// route, before the lane's pacer learns from it.
//
// A shared lane cannot gather the evidence by itself: the route's first 429s cut the
// lane's pacer, and the other routes, queued behind, are then sent too seldom to show
// whether the server still admits them. So the route whose 429 no other route shares gets
// a trial lane of its own (`scope#~route:…`) as soon as another route waits behind it or
// was admitted since: one of its jobs tells the shell to send the route's later requests
// there, its waiting and in-flight calls move along (the 429 that decided it included, so
// the origin's pacer never learns from it), and a `split` event is emitted. The route's
// lane starts from what the origin's pacer had learned; from then on each lane learns from
// its own answers, a global limit included. Both lanes keep recording into one record
// until the rule confirms the split. One route per lane is on trial at a time, so under a
// quota that all routes share at most one route leaves on the first evidence; another
// leaves meanwhile only on the full evidence (refused again and again between admissions
// of the others). Clean path: one property read and one comparison per attempt.
import { RouteOutcomes, type RouteSplitVerdict, splitPolicyName } from '../core/route-split.js'
import { policyScope } from '../core/scope.js'
import type { Signal } from '../core/types.js'
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
}

/** What a lane keeps while it is recording (from its first 429 until a quiet stretch). */
export class LaneRouteRecord {
  readonly outcomes = new RouteOutcomes()
  /** The lane the record belongs to (a trial lane shares its origin's record). */
  home: Lane
  /** The route of the lane's latest 429: the one a split would move. */
  candidate: string | undefined = undefined
  /** A job of that route, which knows how to send its route's later requests elsewhere. */
  candidateJob: Job<unknown> | undefined = undefined
  trial: RouteTrial | undefined = undefined

  constructor(home: Lane) {
    this.home = home
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
    record = lane.routeRecord = new LaneRouteRecord(lane)
  }
  record.outcomes.record(route, kind === 'throttled')
  if (trial !== undefined) {
    if (lane === trial.lane) {
      rejoin(host, record)
      judgeTrial(record, trial)
      return
    }
    judgeTrial(record, trial)
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
  // One route on trial at a time: another leaves meanwhile only on the full evidence (the
  // route on trial was the wrong one, refused by a quota the rest share).
  if (!verdict.split && !(verdict.trial && record.trial === undefined)) return
  if (record.trial !== undefined) end(record, record.trial)
  const started = startTrial(host, call, lane, record, candidate, verdict, now)
  if (started !== undefined && verdict.split) end(record, started)
}

/**
 * A call of another route was just queued in `lane`: it waits behind the lane's candidate (the
 * route of its latest 429), so the candidate goes on trial now rather than at its next answer,
 * which may come many spacings later; meanwhile every arrival of the other routes would queue
 * behind the candidate's pacing (the routes scenario at k = 1: `GET /catalog` waited 16 s for
 * the third 429 of `POST /orders`). The same rule, the same one-trial-at-a-time.
 */
export function noteWaiting(host: SplitHost, call: Call<unknown>, lane: Lane, now: number): void {
  const record = lane.routeRecord
  if (record === undefined || record.trial !== undefined || record.home !== lane) return
  const candidate = record.candidate
  const route = call.job.route
  if (candidate === undefined || typeof route !== 'string' || route === candidate) return
  const verdict = record.outcomes.verdict(candidate, true)
  if (!verdict.trial && !verdict.split) return
  const started = startTrial(host, call, lane, record, candidate, verdict, now)
  if (started !== undefined && verdict.split) end(record, started)
}

/** A confirmed split ends the trial (and lets another route of the lane be tried). */
function judgeTrial(record: LaneRouteRecord, trial: RouteTrial): void {
  if (record.outcomes.verdict(trial.route).split) end(record, trial)
}

/** The origin's lane was evicted while idle and made anew: the trial's record follows it there. */
function rejoin(host: SplitHost, record: LaneRouteRecord): void {
  const current = host.registry.lanes.get(record.home.scope)
  if (current === undefined || current === record.home) return
  record.home = current
  current.routeRecord = record
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
  // Not into a lane still restoring its pacer (from a store), as for the calls in flight below: its
  // answer is fed next to the pacer of the lane it is in, and there was none (the call rejected
  // with "Cannot read properties of undefined").
  if (call.state !== 'done' && moves(call) && target.pacer !== undefined) moveTo(call, target)
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

  const trial: RouteTrial = { route, lane: target }
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
      // The origin's pacer is left as it is: a trial started on the route's first 429 finds it
      // untouched (it learns from an answer only after this); a later one keeps what the lane
      // learned, since handing a queued backlog a fresh pacer bursts it into the quota.
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

function moveTo(call: Call<unknown>, target: Lane): void {
  call.lane = target
  // The job now belongs to the route's lane (and stops counting as the old lane's route).
  call.job.scope = target.scope
}
