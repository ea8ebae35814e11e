// The pacer of a route's lane split off its origin's lane (route-split.ts). The route's
// 429s teach its own pacer only, so they stop slowing the origin's other routes; but the
// route still draws on the origin's quota, so it is sent only when the origin's pacer
// would send too: the origin's pace (the global limit) holds for it.
import type { Aggregate, Pacer, PacerReport, PacerState, Signal } from './types.js'

export class SplitLanePacer implements Pacer {
  readonly own: Pacer
  /** The origin lane's current pacer (it may be replaced, or gone with its evicted lane). */
  readonly #currentParent: () => Pacer | undefined
  /** The last origin pacer seen: an origin lane evicted while idle leaves its pacing to the route's lane. */
  #lastParent: Pacer | undefined = undefined
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
    return Math.max(this.own.delayMs(now, cost), parentDelay)
  }

  onSend(now: number, cost: number): void {
    // The route's sends are its own pacer's business: the origin's pacer is only asked when
    // it would send, never handed a send whose 429 it must not learn from.
    this.own.onSend(now, cost)
  }

  onResult(now: number, signal: Signal): void {
    this.own.onResult(now, signal)
  }

  retryDelayMs(now: number, failures: number, signal: Signal): number {
    return this.own.retryDelayMs?.(now, failures, signal) ?? 0
  }

  toJSON(now: number): PacerState {
    return this.own.toJSON(now)
  }

  onAggregate(now: number, aggregate: Aggregate): void {
    this.own.onAggregate?.(now, aggregate)
  }

  reportDueAt(now: number, backlog?: number): number {
    return this.own.reportDueAt?.(now, backlog) ?? Infinity
  }

  takeReport(now: number): PacerReport | undefined {
    return this.own.takeReport?.(now)
  }

  get ratePerSecond(): number {
    return Math.min(this.own.ratePerSecond, this.#parent()?.ratePerSecond ?? Infinity)
  }

  tokens(now: number): number {
    return Math.min(this.own.tokens(now), this.#parent()?.tokens(now) ?? Infinity)
  }
}
