// One caller's request through the limiter: its place in the lane, its deadline and
// attempt counters, and how to settle it. The call object is its own abort listener
// (`handleEvent`) and is passed as the argument of its timers, so the hot path
// allocates no closures per request.
import type { Signal } from '../core/types.js'
import type { Lane } from './lane.js'
import type { AttemptOutcome, AttemptReport, Job, Settlement } from './limiter-types.js'

/** What a failed attempt (no outcome) tells the pacer. Frozen: shared by every failure. */
export const ERROR_SIGNAL: Signal = Object.freeze({ kind: 'error', status: 0 }) as Signal

/** An attempt that ended without an outcome (a transport error, a job that broke its contract). */
export class AttemptFailure {
  readonly failed = true
  readonly signal: Signal = ERROR_SIGNAL
  readonly error: unknown
  constructor(error: unknown) {
    this.error = error
  }
}

/**
 * How one attempt ended, as the limiter reads it: an outcome (a response, `failed` absent)
 * or a failure. Successes report the job's outcome object itself, so the clean path
 * allocates nothing for it.
 */
export type AttemptEnd = AttemptOutcome<unknown> | AttemptFailure

/** The parts of the limiter a call reaches back into (see create-limiter.ts). */
export interface CallOwner {
  onCallerAbort(call: Call<unknown>): void
  onCallTimer(call: Call<unknown>): void
  /** A `start`-style job reported its attempt (see Job.start). */
  onAttemptReport(call: Call<unknown>, end: AttemptEnd): void
}

export type CallState = 'queued' | 'running' | 'done'

export class Call<T> implements AttemptReport<T> {
  readonly owner: CallOwner
  readonly job: Job<T>
  /** Changes only when the limiter gives the call's route a lane of its own (route-splitter.ts). */
  lane: Lane
  readonly seq: number
  readonly priority: number
  readonly cost: number
  readonly deadlineAt: number
  readonly retryBudget: number
  state: CallState = 'queued'
  /** Earliest epoch ms for the next attempt (0 for a fresh call). */
  notBefore = 0
  /** Epoch ms the call (re-)entered the lane, for the attempt event's waitedMs. */
  enqueuedAt: number
  attempts = 0
  retries = 0
  /** The one timer a call has at a time: its deadline while queued, its attempt timeout while running. */
  timer: unknown = undefined
  /** Whether the running attempt's timer is the call's deadline (else the per-attempt timeout). */
  timerIsDeadline = false
  controller: AbortController | undefined = undefined
  lastSignal: Signal | undefined = undefined
  /** The lane whose pacer counted the send of the attempt in flight (onSend), until that pacer hears the attempt ended. */
  sentFrom: Lane | undefined = undefined
  /**
   * The last 429/503 outcome of a call waiting for its retry, kept (body discarded) only when the
   * call gives up with `giveUp: 'response'`: a later give-up answers with it.
   */
  lastOutcome: AttemptOutcome<unknown> | undefined = undefined
  /** Who learns how the call ended: run()'s promise, or the caller of submit(). */
  sink!: Settlement<T>
  /** Index in the limiter's list of calls with an attempt in flight; -1 when none. */
  runningAt = -1
  /** A `start`-style attempt is out and has not reported yet (guards against a second report). */
  awaitingReport = false

  constructor(owner: CallOwner, lane: Lane, job: Job<T>, seq: number, now: number, deadlineMs: number, retryBudget: number) {
    this.owner = owner
    this.job = job
    this.lane = lane
    this.seq = seq
    this.priority = typeof job.priority === 'number' && Number.isFinite(job.priority) ? job.priority : 0
    this.cost = typeof job.cost === 'number' && job.cost >= 0 && Number.isFinite(job.cost) ? job.cost : 1
    this.deadlineAt = now + deadlineMs
    this.retryBudget = retryBudget
    this.enqueuedAt = now
  }

  resolve(value: T): void {
    this.sink.resolve(value)
  }

  reject(reason: unknown): void {
    this.sink.reject(reason)
  }

  /** AttemptReport of a `start`-style job: the call is its own report object (no allocation per attempt). */
  done(outcome: AttemptOutcome<T>): void {
    if (!this.awaitingReport) return
    this.awaitingReport = false
    this.owner.onAttemptReport(this as Call<unknown>, outcome as AttemptOutcome<unknown>)
  }

  failed(error: unknown): void {
    if (!this.awaitingReport) return
    this.awaitingReport = false
    this.owner.onAttemptReport(this as Call<unknown>, new AttemptFailure(error))
  }

  /** The caller's signal aborted (the call is registered as its 'abort' listener). */
  handleEvent(): void {
    this.owner.onCallerAbort(this as Call<unknown>)
  }
}

/** Timer callback shared by every call (the call is the timer's argument). */
export function fireCallTimer(call: Call<unknown>): void {
  call.owner.onCallTimer(call)
}
