// The limiter's side of learning route splits from status codes (the rule is pure, in
// core/route-split.ts). From a lane's first 429 on, each attempt's outcome is recorded by
// route. The rule is asked about the route of the lane's latest 429 whenever evidence
// arrives: another 429 of it, or a success of another route. When it says that route
// has a limit of its own, the route gets a lane of its own (`scope#~route:…`): one of its
// jobs tells the shell to send later requests of the route there, and its calls waiting
// or in flight in the lane move along. When every recent 429 of the lane came from that
// route, the lane's pacer (cut by those 429s) is replaced by a fresh one, so the other
// routes stop paying for it; the route's new lane starts from what that pacer learned. Clean path: one property read and one comparison per attempt.
import { RouteOutcomes, type RouteSplitVerdict, splitPolicyName } from '../core/route-split.js'
import { policyScope } from '../core/scope.js'
import type { Pacer, Signal } from '../core/types.js'
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

/** What a lane keeps while it is recording (from its first 429 until a quiet window). */
export class LaneRouteRecord {
  readonly outcomes = new RouteOutcomes()
  /** The route of the lane's latest 429: the one a split would move. */
  candidate: string | undefined = undefined
  /** A job of that route, which knows how to send its route's later requests elsewhere. */
  candidateJob: Job<unknown> | undefined = undefined
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
  if (record !== undefined && kind === 'ok' && record.outcomes.quiet(now)) {
    // No 429 for a whole window: back to the clean path.
    lane.routeRecord = undefined
    return
  }
  const job = call.job
  if (typeof job.learnRoute !== 'function') return
  const route = job.route
  if (typeof route !== 'string' || route.length === 0) return
  if (record === undefined) {
    if (kind !== 'throttled') return
    record = lane.routeRecord = new LaneRouteRecord()
  }
  record.outcomes.record(route, kind === 'throttled', now)
  if (kind === 'throttled') {
    record.candidate = route
    record.candidateJob = job
  } else if (record.candidate === undefined || record.candidate === route) {
    return
  }
  const candidate = record.candidate as string
  const verdict = record.outcomes.verdict(candidate, now)
  if (verdict.split) split(host, call, lane, record, candidate, verdict, now)
}

function split(
  host: SplitHost,
  call: Call<unknown>,
  lane: Lane,
  record: LaneRouteRecord,
  route: string,
  verdict: RouteSplitVerdict,
  now: number,
): void {
  const policy = splitPolicyName(route)
  const learner = record.candidateJob
  record.candidate = undefined
  record.candidateJob = undefined
  record.outcomes.forget(route)
  try {
    learner?.learnRoute?.(policy)
  } catch {
    return // a shell that cannot route there: keep the lane as it is
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

  const pacerReset = verdict.otherThrottled === 0 && lane.pacer !== undefined
  if (pacerReset) {
    const previousPerSecond = (lane.pacer as Pacer).ratePerSecond
    registry.resetPacer(lane, now)
    const ratePerSecond = (lane.pacer as Pacer).ratePerSecond
    if (ratePerSecond !== previousPerSecond && host.emitter.has('rate')) {
      host.emitter.emit('rate', { scope: lane.scope, ratePerSecond, previousPerSecond })
    }
  }
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
}

function moveTo(call: Call<unknown>, target: Lane): void {
  call.lane = target
  // The job now belongs to the route's lane (and stops counting as the old lane's route).
  call.job.scope = target.scope
}
