// The transport-agnostic engine: lanes per scope, pacing before every attempt,
// head-of-lane retries, deadlines, budgets, aborts, events, idle eviction and
// persistence. Shells (fetch, service worker, undici) hand it Jobs; it never sees a
// Request or a Response, only the Signal each attempt produced.
//
// Hot path (a scope that has seen no congestion): run() → one Call object, one
// promise, one deadline timer (no AbortController unless `timeoutMs` is set) → the
// attempt starts in the same tick (no queue, no wake timer) → its outcome settles
// the call. A callback-style job (`Job.start`: the fetch and undici shells) reports
// its attempt through the call itself (it is the AttemptReport), with no promise per
// attempt; submit() drops the call's promise too, sending its end to the caller's
// Settlement. Everything that waits goes through the lane's queue and a single wake
// timer per lane, re-computed whenever a result arrives, so a 429 during a wait
// lengthens it instead of leaving a stale reservation.
import { sharedAbortController } from './shared-abort-controller.js'
import { decideRetry, type GiveUpReason, type RetryDecision, settlesAtOnce } from '../core/retry-policy.js'
import type { Pacer, Signal } from '../core/types.js'
import { type AttemptEnd, AttemptFailure, Call, type CallOwner, ERROR_SIGNAL, fireCallTimer } from './call.js'
import { closedError, deadlineError, errorInit, giveUpError } from './call-errors.js'
import { ClosedError, QueueFullError } from './errors.js'
import type { Lane, ScopeStats } from './lane.js'
import { feedLane } from './lane-feedback.js'
import type { LanePersistence } from './lane-persistence.js'
import { LaneRegistry } from './lane-registry.js'
import { LimiterEmitter, type LimiterEventName, type Listener } from './limiter-events.js'
import { noteRoute, noteWaiting, type SplitHost, wantsRouteNote } from './route-splitter.js'
import type { AttemptOutcome, Job, Settlement } from './limiter-types.js'
import { type LimiterOptions, type ResolvedLimiterOptions, resolveLimiterOptions } from './options.js'
import { cancelTimer, startTimer } from './timer.js'

export interface Limiter {
  /** Runs a job through its scope's lane; settles with the final attempt's value or a typed error. */
  run<T>(job: Job<T>): Promise<T>
  /**
   * `run` without a promise: the call ends in exactly one `settle.resolve(value)` or
   * `settle.reject(error)` (possibly synchronously, e.g. a closed limiter). With a
   * `start`-style job and a clean lane nothing is allocated but the call itself.
   */
  submit<T>(job: Job<T>, settle: Settlement<T>): void
  /** One entry per live lane (evicted lanes are not listed). */
  stats(): ScopeStats[]
  on<E extends LimiterEventName>(event: E, listener: Listener<E>): () => void
  /**
   * The live lanes with their pacers and backlogs: what AATB's telemetry driver reports
   * from and feeds aggregates back into. Read-only view; evicted lanes are not listed.
   */
  lanes(): Iterable<LaneView>
  /** Rejects waiting calls with `ClosedError`, aborts attempts in flight, writes pacer state to the store. */
  close(): Promise<void>
}

export interface LaneView {
  scope: string
  pacer: Pacer | undefined
  /** Calls waiting in the lane. */
  backlog: number
}

/** Read through a call so TypeScript does not keep a narrowing that a listener may have invalidated. */
function isSettled(call: Call<unknown>): boolean {
  return call.state === 'done'
}

/**
 * Give-ups that come after a response, which `giveUp: 'response'` answers with that response (the
 * call's own, else the one gating its lane past its deadline).
 */
const ANSWERED_GIVE_UPS: ReadonlySet<string> = new Set<GiveUpReason>(['deadline', 'retry-budget', 'retry-after-too-long'])

/** The outcome when it carries a response (a shell may report a transport failure as an outcome with status 0). */
function responseOf(outcome: AttemptOutcome<unknown> | undefined): AttemptOutcome<unknown> | undefined {
  return outcome !== undefined && outcome.signal.status > 0 ? outcome : undefined
}

/** Whether a job's report is an outcome or a failure (a job may resolve with anything). */
function isAttemptEnd(end: unknown): end is AttemptEnd {
  if (end === null || typeof end !== 'object') return false
  // The outcome test first: it is what every healthy attempt reports, and `instanceof` on an
  // imported class runs V8's generic InstanceOf (about 0.1 µs per request in situ).
  const signal = (end as AttemptOutcome<unknown>).signal
  if (typeof signal === 'object' && signal !== null && (end as { failed?: unknown }).failed !== true) return true
  return end instanceof AttemptFailure
}

/** A per-job override when it is a number >= min (Infinity allowed), else the limiter's option. */
function numberOr(value: unknown, fallback: number, min: number): number {
  return typeof value === 'number' && value >= min && !Number.isNaN(value) ? value : fallback
}

// One executor for every run() promise: it hands its resolve and reject over through
// these two slots (read right after `new Promise` returns), so a call allocates no
// executor closure and no context for it.
let capturedResolve: ((value: never) => void) | undefined
let capturedReject: ((error: unknown) => void) | undefined
function captureSettlement(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  capturedResolve = resolve
  capturedReject = reject
}

function deadlinesFired(engine: Engine): void {
  engine.onDeadlines()
}

class Engine implements CallOwner, SplitHost {
  readonly o: ResolvedLimiterOptions
  readonly emitter = new LimiterEmitter()
  readonly registry: LaneRegistry
  /**
   * Calls with an attempt in flight, so close() can abort them. An array with each call's
   * index (swap-remove) rather than a Set: a Set churned by one add and one delete per
   * request cost Node 20 several microseconds of GC per request.
   */
  readonly #running: Call<unknown>[] = []
  #seq = 0
  #closed = false
  /** The one timer for the deadlines of attempts in flight, and when it fires (Infinity: not armed). */
  #deadlineTimer: unknown = undefined
  #deadlineTimerAt = Infinity
  /** The call whose `start` is running right now (its synchronous report is deferred). */
  #starting: Call<unknown> | undefined
  /** The signal of attempts that have none of their own; aborted by close(). Created on first use. */
  #lifetime: AbortController | undefined

  constructor(options: ResolvedLimiterOptions) {
    this.o = options
    this.registry = new LaneRegistry(options, (lane) => this.#pump(lane))
  }

  get lifetime(): AbortController {
    return (this.#lifetime ??= sharedAbortController())
  }

  /** None once closed: close() wrote the lanes' state, and what a late answer teaches arms no timer. */
  get persistence(): LanePersistence | undefined {
    return this.#closed ? undefined : this.registry.persistence
  }

  run<T>(job: Job<T>): Promise<T> {
    const promise = new Promise<T>(captureSettlement)
    const sink: Settlement<T> = { resolve: capturedResolve as (value: T) => void, reject: capturedReject as (error: unknown) => void }
    capturedResolve = capturedReject = undefined
    this.submit(job, sink)
    return promise
  }

  submit<T>(job: Job<T>, sink: Settlement<T>): void {
    if (job === null || typeof job !== 'object' || typeof job.attempt !== 'function' || typeof job.scope !== 'string') {
      sink.reject(new TypeError('polite-fetch: a job needs a string `scope` and an `attempt` function'))
      return
    }
    if (this.#closed) {
      sink.reject(new ClosedError('polite-fetch: the limiter is closed', { request: job.label }))
      return
    }
    const signal = job.signal
    if (signal?.aborted) {
      sink.reject(signal.reason)
      return
    }
    const o = this.o
    const now = o.clock.now()
    const lane = this.registry.laneFor(job.scope, now)
    const deadlineMs = numberOr(job.deadlineMs, o.deadlineMs, 0)
    const retryBudget = numberOr(job.retryBudget, o.retryBudget, 0)
    const call = new Call<T>(this, lane, job, ++this.#seq, now, deadlineMs, retryBudget)
    call.sink = sink
    signal?.addEventListener('abort', call)
    this.#admit(call as Call<unknown>, now)
  }

  #admit(call: Call<unknown>, now: number): void {
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
      this.#startAttempt(call, now)
      return
    }
    if (lane.queue.size >= o.maxQueue) {
      const message = `polite-fetch: the queue of ${lane.scope} is full (${o.maxQueue} waiting)`
      this.#giveUp(call, new QueueFullError(message, errorInit(call)), 'queue-full', undefined)
      return
    }
    // Past the deadline already at the lane's gate or its pacing (the earliest this call
    // could go, queue aside): say so now rather than at the deadline.
    const earliest = pacer === undefined ? lane.gateUntil : Math.max(lane.gateUntil, now + pacer.delayMs(now, call.cost))
    if (earliest > call.deadlineAt) {
      this.#giveUp(call, deadlineError(call, earliest), 'deadline', earliest)
      return
    }
    this.#enqueue(call, now)
    // A call of another route queued behind a route that the lane's 429s single out: try that route apart now.
    if (lane.routeRecord !== undefined) noteWaiting(this, call, lane, now)
    this.#pump(lane)
  }

  #enqueue(call: Call<unknown>, now: number): void {
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
  #pump(lane: Lane): void {
    const pacer = lane.pacer
    if (pacer === undefined || this.#closed) return
    if (lane.queue.size === 0) {
      // The common case after an attempt settles: nothing waits, so no clock read.
      this.registry.cancelWake(lane)
      return
    }
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
          this.#giveUp(head, deadlineError(head, sendAt), 'deadline', sendAt)
          continue
        }
        // Nobody behind the head goes before it: whoever's deadline comes first cannot make it.
        if (sendAt > lane.hopelessBefore) this.#endHopeless(lane, sendAt)
        this.registry.scheduleWake(lane, sendAt, now)
        return
      }
      lane.queue.shift()
      this.#startAttempt(head, now)
    }
    this.registry.cancelWake(lane)
  }

  #startAttempt(call: Call<unknown>, now: number): void {
    const lane = call.lane
    const o = this.o
    if (call.timer !== undefined) cancelTimer(o.clock, call.timer)
    call.state = 'running'
    this.#addRunning(call)
    call.attempts++
    lane.inFlight++
    lane.attempts++
    const pacer = lane.pacer as Pacer
    pacer.onSend(now, call.cost)
    call.sentFrom = lane
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
      // The deadline of an attempt in flight is watched by one timer for all of them
      // (see #watchDeadline), not a timer per call: no allocation per request.
      call.timer = undefined
      call.timerIsDeadline = true
      if (Number.isFinite(untilDeadline)) this.#watchDeadline(call.deadlineAt, now)
    }
    if (call.job.start === undefined) {
      void this.#execute(call, attemptSignal)
      return
    }
    // Callback-style job: no promise per attempt. A report made inside start() (a
    // dispatch that fails synchronously) is finished on a microtask, never re-entrantly.
    call.awaitingReport = true
    const outer = this.#starting
    this.#starting = call
    try {
      call.job.start(attemptSignal, call.attempts, call)
    } catch (error) {
      call.failed(error)
    } finally {
      this.#starting = outer
    }
  }

  /** Arms the shared deadline timer for `deadlineAt` unless it already fires no later. */
  #watchDeadline(deadlineAt: number, now: number): void {
    if (deadlineAt >= this.#deadlineTimerAt) return
    if (this.#deadlineTimer !== undefined) cancelTimer(this.o.clock, this.#deadlineTimer)
    this.#deadlineTimerAt = deadlineAt
    // Weak: the attempts in flight keep the process alive, not their deadlines, so the
    // timer may stay armed when nothing is in flight (no clear and re-arm per request at
    // concurrency 1); it then fires once, finds nothing, and is not re-armed.
    this.#deadlineTimer = startTimer(this.o.clock, Math.max(0, deadlineAt - now), deadlinesFired, this, true)
  }

  #cancelDeadlineTimer(): void {
    if (this.#deadlineTimer === undefined) return
    cancelTimer(this.o.clock, this.#deadlineTimer)
    this.#deadlineTimer = undefined
    this.#deadlineTimerAt = Infinity
  }

  /** The earliest deadline of the attempts in flight is due: end those past theirs, re-arm for the rest. */
  onDeadlines(): void {
    this.#deadlineTimer = undefined
    this.#deadlineTimerAt = Infinity
    const now = this.o.clock.now()
    let expired: Call<unknown>[] | undefined
    let next = Infinity
    for (const call of this.#running) {
      // Calls with a per-attempt timeout have a timer of their own (call.timer).
      if (call.state !== 'running' || call.timer !== undefined || !Number.isFinite(call.deadlineAt)) continue
      if (call.deadlineAt <= now) (expired ??= []).push(call)
      else if (call.deadlineAt < next) next = call.deadlineAt
    }
    if (next !== Infinity) this.#watchDeadline(next, now)
    if (expired !== undefined) for (const call of expired) this.onCallTimer(call)
  }

  #addRunning(call: Call<unknown>): void {
    call.runningAt = this.#running.length
    this.#running.push(call)
  }

  #removeRunning(call: Call<unknown>): void {
    const at = call.runningAt
    if (at < 0) return
    call.runningAt = -1
    const last = this.#running.pop() as Call<unknown>
    if (last === call) return
    this.#running[at] = last
    last.runningAt = at
  }

  onAttemptReport(call: Call<unknown>, end: AttemptEnd): void {
    if (this.#starting === call) {
      queueMicrotask(() => this.#completeAttempt(call, end))
      return
    }
    this.#completeAttempt(call, end)
  }

  async #execute(call: Call<unknown>, signal: AbortSignal | undefined): Promise<void> {
    let end: AttemptEnd
    try {
      end = await call.job.attempt(signal, call.attempts)
    } catch (error) {
      end = new AttemptFailure(error)
    }
    this.#completeAttempt(call, end)
  }

  #completeAttempt(call: Call<unknown>, reported: AttemptEnd): void {
    const end = isAttemptEnd(reported) ? reported : new AttemptFailure(new TypeError('polite-fetch: job.attempt resolved without an outcome'))
    try {
      this.#finishAttempt(call, end)
    } catch (bug) {
      // A throwing pacer or listener must not leave the call hanging.
      if (call.state !== 'done') {
        this.#settle(call)
        call.reject(bug)
      }
      this.#pump(call.lane)
    }
  }

  /** An attempt ended: free its slot, let the lane learn from it, then settle the call or schedule its retry. */
  #finishAttempt(call: Call<unknown>, end: AttemptEnd): void {
    const lane = call.lane
    const now = this.#release(call)
    if (call.state !== 'running') {
      // Settled while in flight (abort, deadline, close): still learn from a response that came back.
      if (end.failed !== true) {
        this.#learn(call, end, now)
        end.discard?.()
      }
      this.#endSend(call, end, now)
    } else {
      this.#endAttemptTimer(call)
      call.lastSignal = end.signal
      this.#learn(call, end, now)
      this.#endSend(call, end, now)
      if (end.failed !== true && (settlesAtOnce(end.signal) || end.neutral === true)) {
        this.#settle(call)
        call.resolve(end.value)
      } else {
        this.#afterSetback(call, end, now)
      }
    }
    this.#pump(lane)
  }

  /** The attempt is no longer in flight; returns the time it ended. */
  #release(call: Call<unknown>): number {
    const lane = call.lane
    lane.inFlight--
    this.#removeRunning(call)
    const now = this.o.clock.now()
    lane.lastActiveAt = now
    return now
  }

  #endAttemptTimer(call: Call<unknown>): void {
    if (call.timer !== undefined) {
      cancelTimer(this.o.clock, call.timer)
      call.timer = undefined
    }
    call.controller = undefined
  }

  /** The pacer (and the lane's counters, gate and route record) learn from what the attempt said. */
  #learn(call: Call<unknown>, end: AttemptEnd, now: number): void {
    // A response someone upstream already paced (our service worker's mark) teaches this lane nothing.
    if (end.failed === true || end.neutral !== true) this.#feed(call, end.signal, now, end)
  }

  /**
   * The pacer that counted the attempt's send hears that it ended, when learning did not tell it: a
   * failure after the call settled (the caller aborted it), or an answer a route split fed to the
   * pacer of the route's new lane. As an `error`, which teaches no pacer anything about the quota.
   * Unbalanced, ATB counted the attempt in flight forever, and a lane spending a lump waits for its
   * answers: delayMs stayed at 1 ms, the lane woke every millisecond and sent nothing again.
   */
  #endSend(call: Call<unknown>, end: AttemptEnd, now: number): void {
    const from = call.sentFrom
    if (from === undefined) return
    call.sentFrom = undefined
    // Also after a response paced upstream (neutral, which #learn did not feed): it teaches the pacer
    // nothing about the quota, but the send it counted has ended. Skipped, a page's lane that a service
    // worker paces only in part (its match takes some paths) counted those attempts in flight for good.
    from.pacer?.onResult(now, ERROR_SIGNAL)
    // Its lane may have calls waiting for that answer (a lump is spent one attempt at a time).
    if (from !== call.lane) this.#pump(from)
  }

  /** A 429/503 or a failure: retry it, or stop and tell the caller why. */
  #afterSetback(call: Call<unknown>, end: AttemptEnd, now: number): void {
    const decision = this.#decide(call, end, now)
    if (decision.retry) this.#scheduleRetry(call, end, decision.notBefore, now)
    else this.#stop(call, end, decision.reason, decision.retryAt, now)
  }

  #decide(call: Call<unknown>, end: AttemptEnd, now: number): RetryDecision {
    const o = this.o
    const lane = call.lane
    const signal = end.signal
    const finalFailure = end.failed === true ? call.job.finalFailure?.(end.error) : undefined
    return decideRetry({
      now,
      signal,
      retryable: end.failed === true ? finalFailure === undefined : end.retryable === true,
      reason: end.failed === true ? finalFailure : end.reason,
      retryErrors: call.job.retryErrors === true,
      failures: call.attempts,
      retries: call.retries,
      retryBudget: call.retryBudget,
      deadlineAt: call.deadlineAt,
      maxRetryAfterMs: o.maxRetryAfterMs,
      pacerRetryDelayMs: (lane.pacer as Pacer).retryDelayMs?.(now, call.attempts, signal) ?? 0,
      gateUntil: lane.gateUntil,
      errorBackoffBaseMs: o.errorBackoffBaseMs,
      errorBackoffMaxMs: o.errorBackoffMaxMs,
      random: o.random,
    })
  }

  #scheduleRetry(call: Call<unknown>, end: AttemptEnd, notBefore: number, now: number): void {
    const lane = call.lane
    if (end.failed !== true) {
      end.discard?.()
      // Kept (head only) so a give-up while it waits can still answer with the server's response.
      if (end.gaveUp !== undefined && responseOf(end) !== undefined && this.#answersGiveUps(call)) call.lastOutcome = end
    }
    call.retries++
    lane.retries++
    call.notBefore = notBefore
    if (this.emitter.has('retry')) {
      const signal = end.signal
      this.emitter.emit('retry', {
        scope: lane.scope,
        label: call.job.label,
        attempt: call.attempts + 1,
        reason: signal.kind,
        status: signal.status,
        notBefore,
        delayMs: notBefore - now,
        retryAt: signal.retryAt,
      })
      // A listener may have aborted the caller synchronously: that call is settled and
      // must not be re-queued, or a request would go out after its caller gave up.
      if (isSettled(call)) return
    }
    this.#enqueue(call, now)
  }

  /** No retry: a typed give-up (deadline, budget, too-long Retry-After), or the attempt's own result. */
  #stop(call: Call<unknown>, end: AttemptEnd, reason: GiveUpReason | string, retryAt: number | undefined, now: number): void {
    const cause = end.failed === true ? end.error : undefined
    const failure = giveUpError(reason, call, retryAt, now, cause, this.o.maxRetryAfterMs)
    if (failure !== undefined) {
      this.#giveUp(call, failure, reason, retryAt, end.failed === true ? undefined : end)
      return
    }
    // Not retryable (by the job's word or by safety rules): the caller gets what the
    // attempt produced, a final response or the transport error, as fetch would.
    this.#settle(call)
    call.lane.giveUps++
    this.#emitGiveUp(call, reason, retryAt ?? call.lastSignal?.retryAt)
    if (end.failed === true) call.reject(end.error)
    else call.resolve(end.value)
  }

  #answersGiveUps(call: Call<unknown>): boolean {
    return (call.job.giveUp ?? this.o.giveUp) === 'response'
  }

  #feed(call: Call<unknown>, signal: Signal, now: number, end?: AttemptEnd): void {
    // First: a split may move this call (and others of its route) to another lane, whose pacer then learns from it.
    if (wantsRouteNote(call.lane, signal)) noteRoute(this, call, call.lane, signal, now)
    const lane = call.lane
    // The pacer that counted the send hears the answer here; if the call moved lanes, #endSend tells it.
    if (call.sentFrom === lane) call.sentFrom = undefined
    if (feedLane(this, call, signal, now)) {
      lane.gateAnswer = end?.failed !== true && end?.gaveUp !== undefined ? end : undefined
      // The lane's gate moved: calls whose deadline comes before it cannot make it, end them now.
      this.#endHopeless(lane, lane.gateUntil)
    }
  }

  /** Ends the queued calls whose deadline comes before `until`, the earliest any of them can be sent. */
  #endHopeless(lane: Lane, until: number): void {
    lane.hopelessBefore = until
    for (const hopeless of lane.queue.removeWhere((queued) => queued.deadlineAt < until)) {
      this.#giveUp(hopeless, deadlineError(hopeless, until), 'deadline', until)
    }
  }

  runningCalls(): readonly Call<unknown>[] {
    return this.#running
  }

  onCallerAbort(call: Call<unknown>): void {
    if (call.state === 'done') return
    const reason = call.job.signal?.reason
    const lane = call.lane
    if (call.state === 'queued') lane.queue.remove(call)
    else call.controller?.abort(reason)
    this.#settle(call)
    lane.giveUps++
    this.#emitGiveUp(call, 'aborted', undefined)
    call.reject(reason)
    this.#pump(lane)
  }

  onCallTimer(call: Call<unknown>): void {
    if (call.state === 'done') return
    call.timer = undefined
    if (call.state === 'running' && !call.timerIsDeadline) {
      // Per-attempt timeout: the attempt rejects with this reason and counts as an error signal.
      const attempt = call.attempts
      call.controller?.abort(new DOMException('polite-fetch: the attempt timed out', 'TimeoutError'))
      // An attempt that ignores its signal must still not outlive the call's deadline: watch it
      // like the deadline of an attempt without a timeout (onDeadlines ends it). Not when the
      // abort already ended it (a synchronous report may even have started the next attempt).
      if (call.state === 'running' && call.attempts === attempt) {
        call.timerIsDeadline = true
        if (Number.isFinite(call.deadlineAt)) this.#watchDeadline(call.deadlineAt, this.o.clock.now())
      }
      return
    }
    const lane = call.lane
    const now = this.o.clock.now()
    let retryAt: number | undefined
    if (call.state === 'queued') {
      lane.queue.remove(call)
      retryAt = Math.max(lane.gateUntil, call.notBefore, now + (lane.pacer?.delayMs(now, call.cost) ?? 0))
    }
    const error = deadlineError(call, retryAt)
    call.controller?.abort(error)
    this.#giveUp(call, error, 'deadline', retryAt)
    this.#pump(lane)
  }

  #settle(call: Call<unknown>): void {
    call.state = 'done'
    if (call.timer !== undefined) {
      cancelTimer(this.o.clock, call.timer)
      call.timer = undefined
    }
    call.controller = undefined
    call.job.signal?.removeEventListener('abort', call)
  }

  /**
   * Ends the call without success. A give-up after a response (deadline, budget, too-long
   * Retry-After) resolves with that response, marked, when the call's `giveUp` is 'response';
   * everything else rejects with `error`. `outcome`: the attempt just ended, if it produced one.
   */
  #giveUp(
    call: Call<unknown>,
    error: unknown,
    reason: GiveUpReason | string,
    retryAt: number | undefined,
    outcome: AttemptOutcome<unknown> | undefined = undefined,
  ): void {
    this.#settle(call)
    call.lane.giveUps++
    this.#emitGiveUp(call, reason, retryAt)
    const answers = ANSWERED_GIVE_UPS.has(reason) && this.#answersGiveUps(call)
    const own = answers ? (responseOf(outcome) ?? call.lastOutcome) : undefined
    call.lastOutcome = undefined
    if (own?.gaveUp !== undefined) {
      if (own !== outcome) outcome?.discard?.()
      call.resolve(own.gaveUp(reason, retryAt))
      return
    }
    // Refused before the server heard it, because of what the server told the lane: its answer applies.
    const gate = call.lane.gateAnswer
    if (answers && reason === 'deadline' && gate?.gaveUp !== undefined && call.lane.gateUntil > this.o.clock.now()) {
      outcome?.discard?.()
      call.resolve(gate.gaveUp(reason, retryAt, true))
      return
    }
    outcome?.discard?.()
    call.reject(error)
  }

  #emitGiveUp(call: Call<unknown>, reason: GiveUpReason | string, retryAt: number | undefined): void {
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

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const lane of this.registry.lanes.values()) {
      for (const call of lane.queue.removeWhere(() => true)) this.#giveUp(call, closedError(call), 'closed', undefined)
    }
    // Calls in flight: abort their attempts and reject them now rather than after the network answers.
    for (const call of [...this.#running]) {
      if (call.state !== 'running') continue
      const error = closedError(call)
      call.controller?.abort(error)
      this.#giveUp(call, error, 'closed', undefined)
    }
    this.#cancelDeadlineTimer()
    this.#lifetime?.abort(new ClosedError('polite-fetch: the limiter was closed'))
    await this.registry.close()
  }
}

export function createLimiter(options: LimiterOptions = {}): Limiter {
  const engine = new Engine(resolveLimiterOptions(options))
  return {
    run: (job) => engine.run(job),
    submit: (job, settle) => engine.submit(job, settle),
    stats: () => engine.registry.stats(),
    on: (event, listener) => engine.emitter.on(event, listener),
    *lanes() {
      for (const lane of engine.registry.lanes.values()) yield { scope: lane.scope, pacer: lane.pacer, backlog: lane.queue.size }
    },
    close: () => engine.close(),
  }
}
