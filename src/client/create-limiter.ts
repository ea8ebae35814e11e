// The transport-agnostic engine: lanes per scope, pacing before every attempt,
// head-of-lane retries, deadlines, budgets, aborts, events, idle eviction and
// persistence. Shells (fetch, service worker, undici) hand it Jobs; it never sees a
// Request or a Response, only the Signal each attempt produced.
//
// Hot path (a scope that has seen no congestion): run() → one Call object, one
// promise, one AbortController, one deadline timer → the attempt starts in the same
// tick (no queue, no wake timer) → its outcome settles the call. Everything that can
// wait goes through the lane's queue and a single wake timer per lane, which is
// re-computed whenever a result arrives, so a 429 during a wait lengthens it.
import { decideRetry, type GiveUpReason, jitteredRetryAt } from '../core/retry-policy.js'
import type { Pacer, PacerState, Signal } from '../core/types.js'
import { Call, type CallOwner, fireCallTimer } from './call.js'
import {
  ClosedError,
  DeadlineError,
  PoliteFetchError,
  type PoliteFetchErrorOptions,
  QueueFullError,
  RetryAfterTooLongError,
  RetryBudgetError,
} from './errors.js'
import { Lane, type ScopeStats } from './lane.js'
import { LanePersistence } from './lane-persistence.js'
import { LimiterEmitter, type LimiterEventName, type Listener } from './limiter-events.js'
import type { AttemptOutcome, Job } from './limiter-types.js'
import { type LimiterOptions, type ResolvedLimiterOptions, resolveLimiterOptions } from './options.js'
import { cancelTimer, startTimer } from './timer.js'

export interface Limiter {
  /** Runs a job through its scope's lane; settles with the final attempt's value or a typed error. */
  run<T>(job: Job<T>): Promise<T>
  /** One entry per live lane (evicted lanes are not listed). */
  stats(): ScopeStats[]
  on<E extends LimiterEventName>(event: E, listener: Listener<E>): () => void
  /** Rejects waiting calls with `ClosedError`, aborts attempts in flight, writes pacer state to the store. */
  close(): Promise<void>
}

/** What a failed attempt (no outcome) tells the pacer. Frozen: shared by every failure. */
const ERROR_SIGNAL: Signal = Object.freeze({ kind: 'error', status: 0 }) as Signal

function wakeLane(this: void, target: { engine: Engine; lane: Lane }): void {
  target.lane.wakeTimer = undefined
  target.engine.pump(target.lane)
}

function sweepFired(engine: Engine): void {
  engine.sweepTimer = undefined
  engine.sweep()
}

function finiteOr(value: unknown, fallback: number, min: number): number {
  return typeof value === 'number' && value >= min && !Number.isNaN(value) ? value : fallback
}

class Engine implements CallOwner {
  readonly o: ResolvedLimiterOptions
  readonly lanes = new Map<string, Lane>()
  readonly emitter = new LimiterEmitter()
  readonly persistence: LanePersistence | undefined
  sweepTimer: unknown = undefined
  /** Calls with an attempt in flight, so close() can abort them. */
  readonly #running = new Set<Call<unknown>>()
  #seq = 0
  #closed = false
  /** The signal of attempts that have none of their own; aborted by close(). Created on first use. */
  #lifetime: AbortController | undefined

  get lifetime(): AbortController {
    return (this.#lifetime ??= new AbortController())
  }

  constructor(options: ResolvedLimiterOptions) {
    this.o = options
    this.persistence =
      options.store === undefined
        ? undefined
        : new LanePersistence(options.store, options.storeKeyPrefix, options.clock, options.persistIntervalMs)
  }

  run<T>(job: Job<T>): Promise<T> {
    if (job === null || typeof job !== 'object' || typeof job.attempt !== 'function' || typeof job.scope !== 'string') {
      return Promise.reject(new TypeError('polite-fetch: a job needs a string `scope` and an `attempt` function'))
    }
    if (this.#closed) return Promise.reject(new ClosedError('polite-fetch: the limiter is closed', { request: job.label }))
    const signal = job.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    const o = this.o
    const now = o.clock.now()
    const lane = this.laneFor(job.scope, now)
    const deadlineMs = finiteOr(job.deadlineMs, o.deadlineMs, 0)
    const retryBudget = finiteOr(job.retryBudget, o.retryBudget, 0)
    const call = new Call<T>(this, lane, job, ++this.#seq, now, deadlineMs, retryBudget)
    const promise = new Promise<T>((resolve, reject) => {
      call.resolve = resolve
      call.reject = reject
    })
    signal?.addEventListener('abort', call)
    this.admit(call as Call<unknown>, now)
    return promise
  }

  laneFor(scope: string, now: number): Lane {
    let lane = this.lanes.get(scope)
    if (lane !== undefined) return lane
    const persistence = this.persistence
    if (persistence === undefined) {
      lane = new Lane(scope, this.createPacer(now, undefined), now)
    } else {
      // Calls queue until the saved state is back (or known absent): resuming a
      // congested scope with a fresh, unthrottled pacer would burst into its quota.
      lane = new Lane(scope, undefined, now)
      const restoring = lane
      void persistence.restore(scope).then((state) => {
        restoring.pacer = this.createPacer(this.o.clock.now(), state)
        this.pump(restoring)
      })
    }
    this.lanes.set(scope, lane)
    if (this.sweepTimer === undefined) this.sweepTimer = startTimer(this.o.clock, this.o.idleMs, sweepFired, this, true)
    return lane
  }

  createPacer(now: number, state: PacerState | undefined): Pacer {
    const { strategy, random } = this.o
    if (state !== undefined) {
      try {
        return strategy.create({ now, random, state })
      } catch {
        // State from another version or a hostile writer: start fresh rather than fail.
      }
    }
    return strategy.create({ now, random })
  }

  admit(call: Call<unknown>, now: number): void {
    const lane = call.lane
    const o = this.o
    lane.lastActiveAt = now
    const pacer = lane.pacer
    if (
      pacer !== undefined &&
      lane.queue.size === 0 &&
      lane.inFlight < o.maxInFlight &&
      lane.gateUntil <= now &&
      !(pacer.delayMs(now, call.cost) > 0)
    ) {
      this.startAttempt(call, now)
      return
    }
    if (lane.queue.size >= o.maxQueue) {
      const message = `polite-fetch: the queue of ${lane.scope} is full (${o.maxQueue} waiting)`
      this.giveUp(call, new QueueFullError(message, this.errorInit(call)), 'queue-full', undefined)
      return
    }
    if (lane.gateUntil > call.deadlineAt) {
      this.giveUp(call, this.deadlineError(call, lane.gateUntil), 'deadline', lane.gateUntil)
      return
    }
    this.enqueue(call, now)
    this.pump(lane)
  }

  enqueue(call: Call<unknown>, now: number): void {
    call.state = 'queued'
    call.enqueuedAt = now
    call.lane.queue.insert(call)
    const untilDeadline = call.deadlineAt - now
    if (Number.isFinite(untilDeadline)) {
      call.timerIsDeadline = true
      call.timer = startTimer(this.o.clock, untilDeadline, fireCallTimer, call)
    }
  }

  /** Sends every head-of-lane call that may go now; otherwise sleeps until the head may. */
  pump(lane: Lane): void {
    const pacer = lane.pacer
    if (pacer === undefined || this.#closed) return
    const o = this.o
    const now = o.clock.now()
    while (lane.queue.size > 0) {
      if (lane.inFlight >= o.maxInFlight) break // a settling attempt pumps again
      const head = lane.queue.peek() as Call<unknown>
      let sendAt = lane.gateUntil > head.notBefore ? lane.gateUntil : head.notBefore
      const pacerDelayMs = pacer.delayMs(now, head.cost)
      if (now + pacerDelayMs > sendAt) sendAt = now + pacerDelayMs
      if (sendAt > now) {
        if (sendAt > head.deadlineAt) {
          lane.queue.shift()
          this.giveUp(head, this.deadlineError(head, sendAt), 'deadline', sendAt)
          continue
        }
        this.scheduleWake(lane, sendAt, now)
        return
      }
      lane.queue.shift()
      this.startAttempt(head, now)
    }
    this.cancelWake(lane)
  }

  scheduleWake(lane: Lane, at: number, now: number): void {
    if (lane.wakeTimer !== undefined) {
      if (lane.wakeAt === at) return
      cancelTimer(this.o.clock, lane.wakeTimer)
    }
    lane.wakeAt = at
    lane.wakeTimer = startTimer(this.o.clock, at - now, wakeLane, { engine: this, lane })
  }

  cancelWake(lane: Lane): void {
    if (lane.wakeTimer === undefined) return
    cancelTimer(this.o.clock, lane.wakeTimer)
    lane.wakeTimer = undefined
  }

  startAttempt(call: Call<unknown>, now: number): void {
    const lane = call.lane
    const o = this.o
    if (call.timer !== undefined) cancelTimer(o.clock, call.timer)
    call.state = 'running'
    this.#running.add(call)
    call.attempts++
    lane.inFlight++
    lane.attempts++
    ;(lane.pacer as Pacer).onSend(now, call.cost)
    if (this.emitter.has('attempt')) {
      this.emitter.emit('attempt', {
        scope: lane.scope,
        label: call.job.label,
        attempt: call.attempts,
        waitedMs: now - call.enqueuedAt,
      })
    }
    const untilDeadline = call.deadlineAt - now
    let attemptSignal: AbortSignal | undefined
    if (o.timeoutMs !== Infinity) {
      // Only a per-attempt timeout needs a signal of the attempt's own (see Job.attempt).
      const controller = new AbortController()
      call.controller = controller
      attemptSignal = controller.signal
      call.timerIsDeadline = untilDeadline <= o.timeoutMs
      call.timer = startTimer(o.clock, call.timerIsDeadline ? untilDeadline : o.timeoutMs, fireCallTimer, call)
    } else {
      attemptSignal = call.job.signal ?? (call.job.optionalAttemptSignal === true ? undefined : this.lifetime.signal)
      if (Number.isFinite(untilDeadline)) {
        call.timerIsDeadline = true
        call.timer = startTimer(o.clock, untilDeadline, fireCallTimer, call)
      } else {
        call.timer = undefined
      }
    }
    void this.execute(call, attemptSignal)
  }

  async execute(call: Call<unknown>, signal: AbortSignal | undefined): Promise<void> {
    let outcome: AttemptOutcome<unknown> | undefined
    let error: unknown
    let failed = false
    try {
      outcome = await call.job.attempt(signal, call.attempts)
      if (outcome === null || typeof outcome !== 'object' || typeof outcome.signal !== 'object' || outcome.signal === null) {
        throw new TypeError('polite-fetch: job.attempt resolved without an outcome')
      }
    } catch (caught) {
      failed = true
      error = caught
      outcome = undefined
    }
    try {
      this.finishAttempt(call, outcome, failed, error)
    } catch (bug) {
      // A throwing pacer or listener must not leave the call hanging.
      if (call.state !== 'done') {
        this.settle(call)
        call.reject(bug)
      }
      this.pump(call.lane)
    }
  }

  finishAttempt(call: Call<unknown>, outcome: AttemptOutcome<unknown> | undefined, failed: boolean, error: unknown): void {
    const lane = call.lane
    const o = this.o
    lane.inFlight--
    this.#running.delete(call)
    const now = o.clock.now()
    lane.lastActiveAt = now
    if (call.state !== 'running') {
      // Settled while in flight (abort, deadline, close): still learn from a response that came back.
      if (outcome !== undefined) {
        if (outcome.neutral !== true) this.feed(call, outcome.signal, now)
        outcome.discard?.()
      }
      this.pump(lane)
      return
    }
    if (call.timer !== undefined) {
      cancelTimer(o.clock, call.timer)
      call.timer = undefined
    }
    call.controller = undefined
    const signal = outcome === undefined ? ERROR_SIGNAL : outcome.signal
    call.lastSignal = signal
    if (outcome === undefined || outcome.neutral !== true) this.feed(call, signal, now)
    if (outcome !== undefined && (signal.kind === 'ok' || outcome.neutral === true)) {
      this.settle(call)
      call.resolve(outcome.value)
      this.pump(lane)
      return
    }
    const pacer = lane.pacer as Pacer
    const decision = decideRetry({
      now,
      signal,
      retryable: outcome === undefined ? true : outcome.retryable === true,
      reason: outcome?.reason,
      retryErrors: call.job.retryErrors === true,
      failures: call.attempts,
      retries: call.retries,
      retryBudget: call.retryBudget,
      deadlineAt: call.deadlineAt,
      maxRetryAfterMs: o.maxRetryAfterMs,
      pacerRetryDelayMs: pacer.retryDelayMs?.(now, call.attempts, signal) ?? 0,
      gateUntil: lane.gateUntil,
      errorBackoffBaseMs: o.errorBackoffBaseMs,
      errorBackoffMaxMs: o.errorBackoffMaxMs,
      random: o.random,
    })
    if (decision.retry) {
      outcome?.discard?.()
      call.retries++
      lane.retries++
      call.notBefore = decision.notBefore
      if (this.emitter.has('retry')) {
        this.emitter.emit('retry', {
          scope: lane.scope,
          label: call.job.label,
          attempt: call.attempts + 1,
          reason: signal.kind,
          status: signal.status,
          notBefore: decision.notBefore,
          delayMs: decision.notBefore - now,
          retryAt: signal.retryAt,
        })
      }
      this.enqueue(call, now)
      this.pump(lane)
      return
    }
    this.finishWithoutRetry(call, outcome, error, decision.reason, decision.retryAt, now)
    this.pump(lane)
  }

  finishWithoutRetry(
    call: Call<unknown>,
    outcome: AttemptOutcome<unknown> | undefined,
    error: unknown,
    reason: GiveUpReason | string,
    retryAt: number | undefined,
    now: number,
  ): void {
    const init = { ...this.errorInit(call), retryAt, cause: error }
    let failure: PoliteFetchError | undefined
    if (reason === 'retry-budget') {
      failure = new RetryBudgetError(`polite-fetch: retry budget of ${call.retryBudget} used up`, init)
    } else if (reason === 'retry-after-too-long') {
      const waitMs = (retryAt ?? now) - now
      failure = new RetryAfterTooLongError(
        `polite-fetch: the server asked to wait ${Math.round(waitMs)} ms, more than maxRetryAfterMs (${this.o.maxRetryAfterMs})`,
        init,
      )
    } else if (reason === 'deadline') {
      failure = this.deadlineError(call, retryAt, error)
    }
    if (failure !== undefined) {
      outcome?.discard?.()
      this.giveUp(call, failure, reason as GiveUpReason, retryAt)
      return
    }
    // Not retryable (by the job's word or by safety rules): the caller gets what the
    // attempt produced, a final response or the transport error, as fetch would.
    this.settle(call)
    call.lane.giveUps++
    this.emitGiveUp(call, reason, retryAt ?? call.lastSignal?.retryAt)
    if (outcome === undefined) call.reject(error)
    else call.resolve(outcome.value)
  }

  feed(call: Call<unknown>, signal: Signal, now: number): void {
    const lane = call.lane
    const pacer = lane.pacer as Pacer
    const previousPerSecond = pacer.ratePerSecond
    pacer.onResult(now, signal)
    this.persistence?.markDirty(lane)
    switch (signal.kind) {
      case 'ok':
        lane.successes++
        break
      case 'error':
        lane.errors++
        break
      default: {
        if (signal.kind === 'throttled') lane.throttled++
        else lane.overloaded++
        const retryAt = signal.retryAt
        if (typeof retryAt === 'number' && retryAt > now) this.gate(lane, retryAt, now)
        if (this.emitter.has('throttled')) {
          this.emitter.emit('throttled', {
            scope: lane.scope,
            label: call.job.label,
            attempt: call.attempts,
            kind: signal.kind,
            status: signal.status,
            retryAt: signal.retryAt,
          })
        }
      }
    }
    const ratePerSecond = pacer.ratePerSecond
    if (ratePerSecond !== previousPerSecond && this.emitter.has('rate')) {
      this.emitter.emit('rate', { scope: lane.scope, ratePerSecond, previousPerSecond })
    }
  }

  /** The server said "not before retryAt": nothing in this lane goes earlier, and hopeless waits end now. */
  gate(lane: Lane, retryAt: number, now: number): void {
    const o = this.o
    const until = jitteredRetryAt(now, retryAt, o.jitterRatio, o.maxJitterMs, o.random)
    if (until <= lane.gateUntil) return
    lane.gateUntil = until
    const hopeless = lane.queue.removeWhere((call) => call.deadlineAt < until)
    for (const call of hopeless) this.giveUp(call, this.deadlineError(call, until), 'deadline', until)
  }

  onCallerAbort(call: Call<unknown>): void {
    if (call.state === 'done') return
    const reason = call.job.signal?.reason
    const lane = call.lane
    if (call.state === 'queued') lane.queue.remove(call)
    else call.controller?.abort(reason)
    this.settle(call)
    lane.giveUps++
    this.emitGiveUp(call, 'aborted', undefined)
    call.reject(reason)
    this.pump(lane)
  }

  onCallTimer(call: Call<unknown>): void {
    if (call.state === 'done') return
    call.timer = undefined
    if (call.state === 'running' && !call.timerIsDeadline) {
      // Per-attempt timeout: the attempt rejects with this reason and counts as an error signal.
      call.controller?.abort(new DOMException('polite-fetch: the attempt timed out', 'TimeoutError'))
      return
    }
    const lane = call.lane
    const now = this.o.clock.now()
    let retryAt: number | undefined
    if (call.state === 'queued') {
      lane.queue.remove(call)
      retryAt = Math.max(lane.gateUntil, call.notBefore, now + (lane.pacer?.delayMs(now, call.cost) ?? 0))
    }
    const error = this.deadlineError(call, retryAt)
    call.controller?.abort(error)
    this.giveUp(call, error, 'deadline', retryAt)
    this.pump(lane)
  }

  settle(call: Call<unknown>): void {
    call.state = 'done'
    if (call.timer !== undefined) {
      cancelTimer(this.o.clock, call.timer)
      call.timer = undefined
    }
    call.controller = undefined
    call.job.signal?.removeEventListener('abort', call)
  }

  giveUp(call: Call<unknown>, error: unknown, reason: GiveUpReason, retryAt: number | undefined): void {
    this.settle(call)
    call.lane.giveUps++
    this.emitGiveUp(call, reason, retryAt)
    call.reject(error)
  }

  emitGiveUp(call: Call<unknown>, reason: GiveUpReason | string, retryAt: number | undefined): void {
    if (!this.emitter.has('give-up')) return
    this.emitter.emit('give-up', {
      scope: call.lane.scope,
      label: call.job.label,
      attempt: call.attempts,
      reason,
      status: call.lastSignal?.status ?? 0,
      retryAt,
    })
  }

  errorInit(call: Call<unknown>): PoliteFetchErrorOptions {
    return { request: call.job.label, signal: call.lastSignal, attempts: call.attempts }
  }

  deadlineError(call: Call<unknown>, retryAt: number | undefined, cause?: unknown): DeadlineError {
    const when = retryAt === undefined ? '' : ` (next possible attempt at ${new Date(retryAt).toISOString()})`
    return new DeadlineError(`polite-fetch: deadline reached for ${call.job.label ?? call.lane.scope}${when}`, {
      ...this.errorInit(call),
      retryAt,
      cause,
    })
  }

  sweep(): void {
    const now = this.o.clock.now()
    for (const [scope, lane] of this.lanes) {
      if (lane.pacer === undefined || !lane.isIdle() || now - lane.lastActiveAt < this.o.idleMs) continue
      // Without a store, a lane still gated by a server's retryAt is kept: forgetting the
      // gate would let the next call go out before the server allows it.
      if (this.persistence === undefined && lane.gateUntil > now) continue
      this.cancelWake(lane)
      this.lanes.delete(scope)
      void this.persistence?.write(lane, now)
    }
    if (this.lanes.size > 0 && !this.#closed) {
      this.sweepTimer = startTimer(this.o.clock, this.o.idleMs, sweepFired, this, true)
    }
  }

  stats(): ScopeStats[] {
    const now = this.o.clock.now()
    const result: ScopeStats[] = []
    for (const lane of this.lanes.values()) result.push(lane.stats(now))
    return result
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const clock = this.o.clock
    const now = clock.now()
    if (this.sweepTimer !== undefined) {
      cancelTimer(clock, this.sweepTimer)
      this.sweepTimer = undefined
    }
    for (const lane of this.lanes.values()) {
      this.cancelWake(lane)
      for (const call of lane.queue.removeWhere(() => true)) {
        this.giveUp(call, new ClosedError('polite-fetch: the limiter was closed', this.errorInit(call)), 'closed', undefined)
      }
    }
    // Calls in flight: abort their attempts and reject them now rather than after the network answers.
    for (const call of [...this.#running]) {
      if (call.state !== 'running') continue
      const error = new ClosedError('polite-fetch: the limiter was closed', this.errorInit(call))
      call.controller?.abort(error)
      this.giveUp(call, error, 'closed', undefined)
    }
    this.#lifetime?.abort(new ClosedError('polite-fetch: the limiter was closed'))
    await this.persistence?.flushAll(this.lanes.values())
  }

}

export function createLimiter(options: LimiterOptions = {}): Limiter {
  const engine = new Engine(resolveLimiterOptions(options))
  return {
    run: (job) => engine.run(job),
    stats: () => engine.stats(),
    on: (event, listener) => engine.emitter.on(event, listener),
    close: () => engine.close(),
  }
}
