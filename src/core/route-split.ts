// Learning from status codes alone that one route has a limit of its own. A lane keyed
// by origin mixes every route; when the server names no policy, a 429 on `POST /products`
// (an endpoint limit) cuts the pace of `GET /items` too. But the two cases look
// different from the outside: under a shared quota the 429s fall on every route, while
// under an endpoint limit they pile up on one route as the server keeps admitting the
// others. `RouteOutcomes` keeps a small record of a lane's recent outcomes per route and
// `verdict` says how clear that difference is. Evidence is counted in the lane's own
// outcomes, never in seconds: the same sequence of answers gives the same verdict whether
// the quota refills per second or per hour. Pure: no clock, no timers, no I/O.
import { MAX_POLICY_NAME_LENGTH, pathTemplate } from './scope.js'

/** When a route is judged to have a limit of its own (every field a count or a share of counts). */
export interface RouteSplitRule {
  /** The route's 429s (from its first one in its ring): never split on one or two. */
  minThrottled: number
  /** Share of the route's outcomes, from its first 429 on, that were 429s. */
  minThrottledShare: number
  /** Successes of the lane's other routes after the route's first 429. */
  minOtherSuccesses: number
  /** Others' 429s, as a share of those successes ("almost none": a shared quota throttles everyone). */
  maxOtherThrottledShare: number
  /** The route's 429s between successes of other routes (after its first 429): refused while others pass. */
  minRefusedBetweenOthers: number
}

export const DEFAULT_ROUTE_SPLIT_RULE: Readonly<RouteSplitRule> = Object.freeze({
  minThrottled: 3,
  minThrottledShare: 1 / 3,
  minOtherSuccesses: 3,
  maxOtherThrottledShare: 0.1,
  minRefusedBetweenOthers: 2,
})

export interface RouteSplitVerdict {
  /** The evidence is clear: the route has a limit of its own. */
  split: boolean
  /**
   * Worth a trial lane: the route has more than twice the 429s of all other routes together
   * (a global limit refuses the others now and then too), and another route was admitted
   * after its first refusal or waits behind it. The trial is what gathers the evidence:
   * in a shared lane the route's 429s slow the others too, so they are sent too seldom to
   * tell the two cases apart.
   */
  trial: boolean
  /** The route's 429s and outcomes, from its first 429 in its ring on. */
  throttled: number
  outcomes: number
  /** Successes of other routes after the route's first 429. */
  otherSuccesses: number
  /** 429s of other routes in the record (at least 1 for a route whose 429 has left its ring). */
  otherThrottled: number
  /** The route's 429s with a success of another route before (after the route's first 429) and after them. */
  refusedBetweenOthers: number
}

/** Outcomes kept per route; enough for the rule, whatever the other routes' volume. */
const OUTCOMES_PER_ROUTE = 12

/**
 * A record with no 429 in its last this many outcomes has nothing left to judge (every ring
 * of a two-route lane has turned over). Counted, so it means the same at every time scale.
 */
const QUIET_OUTCOMES = 2 * OUTCOMES_PER_ROUTE

/** One route's last outcomes, in a ring. */
class RouteRecord {
  /** Order of recording across the lane, so "after" is exact. */
  readonly seq = new Float64Array(OUTCOMES_PER_ROUTE)
  readonly throttled = new Uint8Array(OUTCOMES_PER_ROUTE)
  next = 0
  count = 0
  lastSeq = 0
  /** Kept apart from the ring: a busy route's ring turns over fast, its last 429 may be older. */
  lastThrottledSeq = 0

  push(throttled: boolean, seq: number): void {
    const i = this.next
    this.seq[i] = seq
    this.throttled[i] = throttled ? 1 : 0
    this.next = (i + 1) % OUTCOMES_PER_ROUTE
    if (this.count < OUTCOMES_PER_ROUTE) this.count++
    this.lastSeq = seq
    if (throttled) this.lastThrottledSeq = seq
  }
}

/** A lane's recent outcomes by route: at most `maxRoutes` routes × 12 outcomes. */
export class RouteOutcomes {
  readonly #maxRoutes: number
  readonly #routes = new Map<string, RouteRecord>()
  #seq = 0
  #lastThrottledSeq = 0

  constructor(maxRoutes = 16) {
    this.#maxRoutes = Math.max(2, Math.floor(maxRoutes))
  }

  get size(): number {
    return this.#routes.size
  }

  record(route: string, throttled: boolean): void {
    let record = this.#routes.get(route)
    if (record === undefined) {
      if (this.#routes.size >= this.#maxRoutes) this.#evictStalest()
      record = new RouteRecord()
      this.#routes.set(route, record)
    }
    record.push(throttled, ++this.#seq)
    if (throttled) this.#lastThrottledSeq = this.#seq
  }

  /** No 429 in the last QUIET_OUTCOMES outcomes: nothing to judge, the record can be dropped. */
  quiet(): boolean {
    return this.#seq - this.#lastThrottledSeq >= QUIET_OUTCOMES
  }

  /** The route left the lane: its outcomes no longer tell anything about the others. */
  forget(route: string): void {
    this.#routes.delete(route)
  }

  /**
   * @param othersWaiting whether calls of other routes wait (or are in flight) in the lane:
   *   with none, a trial lane would gain nothing yet.
   */
  verdict(route: string, othersWaiting = false, rule: RouteSplitRule = DEFAULT_ROUTE_SPLIT_RULE): RouteSplitVerdict {
    const own = this.#routes.get(route)
    let throttled = 0
    let outcomes = 0
    let firstThrottledSeq = Infinity
    if (own !== undefined) {
      for (let k = 0; k < own.count; k++) {
        if (own.throttled[k] === 1 && own.seq[k]! < firstThrottledSeq) firstThrottledSeq = own.seq[k]!
      }
      // The route's share is counted from its first 429 on: the successes that emptied its
      // limit before say nothing about whether it is now refused.
      for (let k = 0; k < own.count; k++) {
        if (own.seq[k]! < firstThrottledSeq) continue
        outcomes++
        if (own.throttled[k] === 1) throttled++
      }
    }
    let otherSuccesses = 0
    let otherThrottled = 0
    let firstOtherSuccessSeq = Infinity
    let lastOtherSuccessSeq = -Infinity
    for (const [name, record] of this.#routes) {
      if (name === route) continue
      let throttledHere = 0
      for (let k = 0; k < record.count; k++) {
        const seq = record.seq[k]!
        if (record.throttled[k] === 1) throttledHere++
        else if (seq > firstThrottledSeq) {
          otherSuccesses++
          if (seq < firstOtherSuccessSeq) firstOtherSuccessSeq = seq
          if (seq > lastOtherSuccessSeq) lastOtherSuccessSeq = seq
        }
      }
      if (throttledHere === 0 && record.lastThrottledSeq > 0) throttledHere = 1
      otherThrottled += throttledHere
    }
    // What sets a limit of the route's own apart from a shared quota that happened to refuse
    // the route's requests (the last ones of a burst, say): the server refused the route
    // between admissions of other routes, so the quota they draw on was not dry.
    let refusedBetweenOthers = 0
    if (own !== undefined && firstOtherSuccessSeq !== Infinity) {
      for (let k = 0; k < own.count; k++) {
        const seq = own.seq[k]!
        if (own.throttled[k] === 1 && seq > firstOtherSuccessSeq && seq < lastOtherSuccessSeq) refusedBetweenOthers++
      }
    }
    const trial = throttled > 2 * otherThrottled && (otherSuccesses > 0 || othersWaiting)
    const split =
      refusedBetweenOthers >= rule.minRefusedBetweenOthers &&
      throttled >= rule.minThrottled &&
      throttled >= rule.minThrottledShare * outcomes - 1e-9 &&
      otherSuccesses >= rule.minOtherSuccesses &&
      otherThrottled <= rule.maxOtherThrottledShare * otherSuccesses
    return { split, trial, throttled, outcomes, otherSuccesses, otherThrottled, refusedBetweenOthers }
  }

  #evictStalest(): void {
    let stalest: string | undefined
    let stalestSeq = Infinity
    for (const [name, record] of this.#routes) {
      if (record.lastSeq < stalestSeq) {
        stalest = name
        stalestSeq = record.lastSeq
      }
    }
    if (stalest !== undefined) this.#routes.delete(stalest)
  }
}

/** Method + path template, the unit a split applies to within one origin: `POST /products/:id`. */
export function laneRoute(method: string, pathname: string): string {
  return `${method.toUpperCase()} ${pathTemplate(pathname)}`
}

const SPLIT_PREFIX = '~route:'

/** FNV-1a, 32 bits, as 8 hex digits: a short stable tag for a name too long to keep whole. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/**
 * The synthetic policy name of a split route (`~route:POST /products`), the lane suffix
 * after `#`. The `~` keeps it apart from names a server sends; a long route is cut and
 * tagged with a hash so the name stays within MAX_POLICY_NAME_LENGTH and distinct.
 */
export function splitPolicyName(route: string): string {
  const name = SPLIT_PREFIX + route
  if (name.length <= MAX_POLICY_NAME_LENGTH) return name
  return `${name.slice(0, MAX_POLICY_NAME_LENGTH - 9)}~${shortHash(route)}`
}
