// A virtual clock for tests: `now()` only moves when the test calls `advance`, and
// `sleep` resolves when virtual time reaches its end. After each timer fires the
// clock lets pending promise chains run, so code woken by a timer has done its work
// before `advance` returns. No real time passes; nothing here reads Date.now.
import type { Clock } from '../../src/core/types.js'

interface Sleeper {
  at: number
  seq: number
  resolve(): void
}

/** Lets every queued microtask and promise chain run (one macrotask turn, twice for chains that re-queue). */
export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

export class ManualClock implements Clock {
  #now: number
  #seq = 0
  #sleepers: Sleeper[] = []

  constructor(start = 1_700_000_000_000) {
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = { at: this.#now + Math.max(0, ms), seq: this.#seq++, resolve }
      if (signal !== undefined) {
        const onAbort = (): void => {
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper)
          reject(signal.reason)
        }
        signal.addEventListener('abort', onAbort, { once: true })
        sleeper.resolve = () => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        }
      }
      this.#sleepers.push(sleeper)
    })
  }

  /** Sleepers not yet woken. */
  get pending(): number {
    return this.#sleepers.length
  }

  /** Epoch ms of the earliest sleeper, if any. */
  nextAt(): number | undefined {
    let next: number | undefined
    for (const sleeper of this.#sleepers) if (next === undefined || sleeper.at < next) next = sleeper.at
    return next
  }

  /** Moves time forward by `ms`, waking sleepers in time order, letting each one's follow-up work run. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.#now + ms)
  }

  async advanceTo(target: number): Promise<void> {
    await flushPromises()
    for (;;) {
      const due = this.#sleepers.filter((s) => s.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0]
      if (due === undefined) break
      this.#sleepers = this.#sleepers.filter((s) => s !== due)
      if (due.at > this.#now) this.#now = due.at
      due.resolve()
      await flushPromises()
    }
    if (target > this.#now) this.#now = target
    await flushPromises()
  }

  /** Advances to the next sleeper's time (bounded by `maxMs` from now); false when none is due. */
  async next(maxMs = Infinity): Promise<boolean> {
    await flushPromises()
    const at = this.nextAt()
    if (at === undefined || at - this.#now > maxMs) return false
    await this.advanceTo(at)
    return true
  }
}
