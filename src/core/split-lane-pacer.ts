// The pacer of a route's lane split off its origin's lane (route-split.ts). The route's
// 429s teach its own pacer only, so they stop slowing the origin's other routes; but the
// route still draws on the origin's quota, so it is sent only when the origin's pacer
// would send too (the global limit holds). When the evidence says the quota was shared
// after all, the lane turns `joint`: from then on it is a second queue on the origin's
// pacer, every send and answer going there, as if it had never left.
import type { Aggregate, Pacer, PacerReport, PacerState, Signal } from './types.js'

export class SplitLanePacer implements Pacer {
  readonly own: Pacer
  /** The origin lane's current pacer (it may be replaced, or gone with its evicted lane). */
  readonly #currentParent: () => Pacer | undefined
  /** The last origin pacer seen: an origin lane evicted while idle leaves its pacing to the route's lane. */
  #lastParent: Pacer | undefined = undefined
  /** The route paces with its origin again (a shared quota). */
  joint = false

  constructor(own: Pacer, parent: () => Pacer | undefined) {
    this.own = own
    this.#currentParent = parent
  }

  #parent(): Pacer | undefined {
    const current = this.#currentParent()
    if (current !== undefined) this.#lastParent = current
    return this.#lastParent
  }

  delayMs(now: number, cost: number): number {
    const parent = this.#parent()
    const parentDelay = parent === undefined ? 0 : parent.delayMs(now, cost)
    return this.joint ? parentDelay : Math.max(this.own.delayMs(now, cost), parentDelay)
  }

  onSend(now: number, cost: number): void {
    // While split, the route's sends are its own pacer's business: the origin's pacer is
    // only asked when it would send, never handed a send whose 429 it must not learn from.
    if (this.joint) this.#parent()?.onSend(now, cost)
    else this.own.onSend(now, cost)
  }

  onResult(now: number, signal: Signal): void {
    if (this.joint) this.#parent()?.onResult(now, signal)
    else this.own.onResult(now, signal)
  }

  retryDelayMs(now: number, failures: number, signal: Signal): number {
    const pacer = this.joint ? this.#parent() : this.own
    return pacer?.retryDelayMs?.(now, failures, signal) ?? 0
  }

  toJSON(now: number): PacerState {
    return this.own.toJSON(now)
  }

  onAggregate(now: number, aggregate: Aggregate): void {
    this.own.onAggregate?.(now, aggregate)
  }

  reportDueAt(now: number, backlog?: number): number {
    // Joint: the origin's lane reports for both.
    return this.joint ? Infinity : (this.own.reportDueAt?.(now, backlog) ?? Infinity)
  }

  takeReport(now: number): PacerReport | undefined {
    return this.joint ? undefined : this.own.takeReport?.(now)
  }

  get ratePerSecond(): number {
    const parent = this.#parent()?.ratePerSecond ?? Infinity
    return this.joint ? parent : Math.min(this.own.ratePerSecond, parent)
  }

  tokens(now: number): number {
    const parent = this.#parent()?.tokens(now) ?? Infinity
    return this.joint ? parent : Math.min(this.own.tokens(now), parent)
  }
}
