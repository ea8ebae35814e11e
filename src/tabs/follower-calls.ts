// The follower's side of shared lanes: the calls of this tab whose scope another tab leads
// (or nobody yet). Each stays here with its job, so the request, its body, every response
// and every transport error stay in this tab; the leader hears what each response said and
// answers with the call's end. When a scope's leader changes, the calls it held are
// resubmitted, and an attempt in flight decides locally once it comes back (remote-call.ts).
import type { Limiter } from '../client/create-limiter.js'
import { ClosedError, DeadlineError, RetryBudgetError } from '../client/errors.js'
import { type AnyClock, cancelTimer, startTimer } from '../client/timer.js'
import type { AttemptOutcome, AttemptReport, GiveUpMode, Job, Settlement } from '../client/limiter-types.js'
import { finalAnswer } from '../core/retry-policy.js'
import type { Signal } from '../core/types.js'
import { TAB_MESSAGE, type ErrorData, type SignalData, type TabMessage, type TabPayload } from '../protocol/tab-messages.js'
import { RemoteCall } from './remote-call.js'
import { fromErrorData, toErrorData } from './tab-errors.js'

export interface FollowerCallsOptions {
  tabId: string
  /** This tab's own limiter: where a call goes once this tab leads its scope. */
  local: Limiter
  leaderOf(scope: string): string | undefined
  post(payload: TabPayload, to?: string): void
  /**
   * The limiter's clock: its timers, not the page's, so a hidden follower's deadline is not
   * held back by timer throttling (worker-clock.ts) and a test's manual clock drives it.
   */
  clock: AnyClock
  /** The limiter's defaults, for jobs without their own. */
  deadlineMs: number
  retryBudget: number
  giveUp: GiveUpMode
}

export interface FollowerCalls {
  /** Run `job` in the lane another tab leads (or will lead) for its scope. */
  submit<T>(job: Job<T>, sink: Settlement<T>): void
  /** `leader` (maybe this tab) leads `scope` now: resubmit what an earlier leader held. */
  leaderChanged(scope: string, leader: string): void
  /** A leader's answer: grant, abort-attempt, discard, settle, reject, learn-route. */
  onMessage(message: TabMessage): void
  /** Every leader dropped this tab's calls (it left the group): each waits for its scope's next leader. */
  leaderLeft(): void
  /** The scopes of the calls still waiting or in flight. */
  scopes(): Set<string>
  /** Reject every call with ClosedError (this tab is closing). */
  closeAll(): void
}

function toSignalData(signal: Signal): SignalData {
  const data: SignalData = { kind: signal.kind, status: signal.status }
  if (signal.retryAt !== undefined) data.retryAt = signal.retryAt
  if (signal.retryResolutionMs !== undefined) data.retryResolutionMs = signal.retryResolutionMs
  if (signal.remaining !== undefined) data.remaining = signal.remaining
  if (signal.resetAt !== undefined) data.resetAt = signal.resetAt
  if (signal.limit !== undefined) data.limit = signal.limit
  if (signal.policy !== undefined) data.policy = signal.policy
  if (signal.shouldRetry !== undefined) data.shouldRetry = signal.shouldRetry
  if (signal.policies !== undefined) data.policies = signal.policies.map((p) => ({ ...p }))
  return data
}

/** The give-ups `giveUp: 'response'` answers with the server's response, by the error's class. */
const ANSWERED_GIVE_UPS: Record<string, string> = {
  DeadlineError: 'deadline',
  RetryBudgetError: 'retry-budget',
  RetryAfterTooLongError: 'retry-after-too-long',
}

/**
 * Ends `call` with a give-up's `error`, or, when the call answers give-ups with a response and
 * holds one, with that response marked (give-up-header.ts), as the tab's own lane does. The
 * lane decides, the follower answers: only the follower holds its responses.
 */
function giveUp(call: RemoteCall<unknown>, error: Error, retryAt: number | undefined): void {
  const reason = Object.hasOwn(ANSWERED_GIVE_UPS, error.name) ? ANSWERED_GIVE_UPS[error.name] : undefined
  const answer = reason !== undefined && call.answersGiveUps ? call.takeAnswer() : undefined
  call.discardAll()
  if (answer?.gaveUp !== undefined) call.sink.resolve(answer.gaveUp(reason!, retryAt))
  else call.sink.reject(error)
}

/** What an attempt that failed without a response tells the retry rules. */
const FAILED: Signal = { kind: 'error', status: 0 }

/** A used-up budget, worded as the lane words it (call-errors.ts), counted over the whole call. */
const budgetError = (call: RemoteCall<unknown>, retryAt?: number) =>
  new RetryBudgetError(
    `polite-fetch: ${call.job.label ?? call.scope}: retry budget of ${call.retryBudget} used up after ${call.attempts} attempt${call.attempts === 1 ? '' : 's'}`,
    { request: call.job.label, attempts: call.attempts, retryAt },
  )

/**
 * A leader's give-up, told in the call's own terms: after a handover the lane counted only the
 * attempts it granted and the budget it was left, the follower knows every attempt and the whole budget.
 */
function leaderGiveUp(call: RemoteCall<unknown>, data: ErrorData): Error {
  if (data.name === 'RetryBudgetError') return budgetError(call, data.retryAt)
  return fromErrorData({ ...data, attempts: Math.max(data.attempts ?? 0, call.attempts) })
}

const validAmount = (value: unknown, fallback: number) => (typeof value === 'number' && value >= 0 ? value : fallback)

export function createFollowerCalls(options: FollowerCallsOptions): FollowerCalls {
  const { tabId, local, post, clock } = options
  const now = () => clock.now()
  const calls = new Map<number, RemoteCall<unknown>>()
  let seq = 0

  const end = (call: RemoteCall<unknown>): boolean => {
    if (!call.finish()) return false
    calls.delete(call.id)
    return true
  }

  /** Hand the call to whoever leads its scope now: this tab's own lane, another tab, or nobody yet. */
  const submitTo = (call: RemoteCall<unknown>) => {
    const leader = options.leaderOf(call.scope)
    call.submittedTo = undefined
    if (leader === undefined) return // sent on the next hello
    const retryBudget = call.budgetFromHere()
    if (retryBudget < 0) {
      // Only a leader that counted from a fresh budget (an older tab) gets here: the follower keeps the caller's limit.
      if (end(call)) giveUp(call, budgetError(call), undefined)
      return
    }
    if (leader === tabId) {
      if (!end(call)) return
      const remainingMs = call.deadlineAt - now()
      if (remainingMs <= 0) {
        giveUp(call, new DeadlineError(`polite-fetch: deadline reached for ${call.job.label ?? call.scope}`, { request: call.job.label, attempts: call.attempts }), undefined)
        return
      }
      call.job.deadlineMs = remainingMs
      call.job.retryBudget = retryBudget
      local.submit(call.job, call.sink)
      return
    }
    call.submittedTo = leader
    const job = call.job
    post(
      {
        type: TAB_MESSAGE.call,
        id: call.id,
        call: {
          scope: call.scope,
          cost: typeof job.cost === 'number' && job.cost >= 0 && Number.isFinite(job.cost) ? job.cost : 1,
          ...(typeof job.priority === 'number' && Number.isFinite(job.priority) ? { priority: job.priority } : {}),
          deadlineAt: call.deadlineAt,
          retryBudget, // retries left: the protocol's meaning since v1, so an older leader counts right too
          retryErrors: job.retryErrors === true,
          ...(job.label !== undefined ? { label: job.label } : {}),
          ...(job.route !== undefined ? { route: job.route } : {}),
          attemptsDone: call.attempts,
        },
      },
      leader,
    )
  }

  /**
   * The leader the call was submitted to is gone (or another took over). An attempt it
   * granted that has come back decides locally, as the leader would have: a final answer
   * settles here; a retryable one goes to the new leader's lane, attempts counted on.
   */
  const recover = (call: RemoteCall<unknown>) => {
    if (call.done || call.running !== undefined) return // an attempt in flight recovers when it ends
    const last = call.results.get(call.attempts)
    if (last !== undefined) {
      const { outcome, error } = last
      // The lane's own rules (a neutral answer was paced upstream and settles, as in the lane).
      const retry =
        outcome !== undefined
          ? outcome.neutral !== true && finalAnswer(outcome.signal, outcome.retryable, outcome.reason, call.job.retryErrors === true) === undefined
          : finalAnswer(FAILED, call.job.finalFailure?.(error) === undefined, undefined, call.job.retryErrors === true) === undefined
      if (!retry || call.budgetFromHere() < 0) {
        if (!end(call)) return
        if (retry) {
          giveUp(call, budgetError(call), outcome?.signal.retryAt)
          return
        }
        call.results.delete(call.attempts)
        call.discardAll()
        if (outcome !== undefined) call.sink.resolve(outcome.value)
        else call.sink.reject(error)
        return
      }
      call.discardAll()
    }
    submitTo(call)
  }

  /** Tell `leader` what attempt `attempt` of `call` came back with. */
  const report = (call: RemoteCall<unknown>, attempt: number, outcome: AttemptOutcome<unknown> | undefined, error: unknown, leader: string) => {
    if (outcome !== undefined) {
      const payload: TabPayload = {
        type: TAB_MESSAGE.outcome,
        id: call.id,
        attempt,
        signal: toSignalData(outcome.signal),
        retryable: outcome.retryable,
        neutral: outcome.neutral === true,
      }
      if (outcome.reason !== undefined) payload.reason = outcome.reason
      post(payload, leader)
    } else {
      const finalReason = call.job.finalFailure?.(error)
      post({ type: TAB_MESSAGE.failed, id: call.id, attempt, error: toErrorData(error), ...(finalReason !== undefined ? { finalReason } : {}) }, leader)
    }
  }

  const attemptEnded = (call: RemoteCall<unknown>, attempt: number, outcome: AttemptOutcome<unknown> | undefined, error: unknown) => {
    const grantedBy = call.running?.attempt === attempt ? call.running.grantedBy : undefined
    if (grantedBy !== undefined) call.running = undefined
    if (call.done) {
      // The call ended with this attempt out (the leader's deadline): its lane still counts the
      // attempt in flight and learns from its answer, as a tab's own lane does from an abandoned one.
      if (grantedBy !== undefined) report(call, attempt, outcome, error, grantedBy)
      outcome?.discard?.()
      return
    }
    call.results.set(attempt, { outcome, error })
    const leader = call.submittedTo
    if (leader === undefined || leader !== grantedBy || options.leaderOf(call.scope) !== leader) {
      recover(call)
      return
    }
    report(call, attempt, outcome, error, leader)
  }

  const startAttempt = (call: RemoteCall<unknown>, attempt: number, grantedBy: string) => {
    call.attempts = attempt
    const controller = new AbortController()
    call.running = { attempt, controller, grantedBy }
    let reported = false
    const attemptReport: AttemptReport<unknown> = {
      done: (outcome) => {
        if (reported) return
        reported = true
        attemptEnded(call, attempt, outcome, undefined)
      },
      failed: (error) => {
        if (reported) return
        reported = true
        attemptEnded(call, attempt, undefined, error)
      },
    }
    try {
      if (call.job.start !== undefined) call.job.start(controller.signal, attempt, attemptReport)
      else call.job.attempt(controller.signal, attempt).then(attemptReport.done, attemptReport.failed)
    } catch (error) {
      attemptReport.failed(error)
    }
  }

  const leaveCall = (call: RemoteCall<unknown>) => {
    if (call.submittedTo !== undefined) post({ type: TAB_MESSAGE.cancel, id: call.id }, call.submittedTo)
    call.discardAll()
  }

  const onMessage = (message: TabMessage) => {
    if (message.to !== undefined && message.to !== tabId) return
    if (!('id' in message)) return
    const call = calls.get(message.id)
    // Only the leader the call is submitted to speaks for it: a stale grant from a leader
    // that handed over must not send a request twice. Such a leader waits for an answer to
    // its grant with a slot of its lane taken: cancel frees it.
    if (call === undefined || call.done || call.submittedTo !== message.from) {
      if (message.type === TAB_MESSAGE.grant) post({ type: TAB_MESSAGE.cancel, id: message.id }, message.from)
      return
    }
    switch (message.type) {
      case TAB_MESSAGE.grant:
        if (call.running === undefined && message.attempt === call.attempts + 1) startAttempt(call, message.attempt, message.from)
        return
      case TAB_MESSAGE.abortAttempt:
        if (call.running?.attempt === message.attempt) call.running.controller.abort(fromErrorData(message.error))
        return
      case TAB_MESSAGE.discard:
        call.discard(message.attempt)
        return
      case TAB_MESSAGE.settle: {
        const result = call.results.get(message.attempt)
        if (result === undefined || !end(call)) return
        call.results.delete(message.attempt)
        call.discardAll()
        if (result.outcome !== undefined) call.sink.resolve(result.outcome.value)
        else call.sink.reject(result.error)
        return
      }
      case TAB_MESSAGE.reject:
        // An attempt still in flight is abandoned, not cancelled, as in the tab's own lane.
        if (!end(call)) return
        giveUp(call, leaderGiveUp(call, message.error), message.error.retryAt)
        return
      case TAB_MESSAGE.learnRoute:
        call.job.learnRoute?.(message.policy)
        return
      default:
    }
  }

  function submit<T>(job: Job<T>, sink: Settlement<T>): void {
    const signal = job.signal
    const deadlineAt = now() + validAmount(job.deadlineMs, options.deadlineMs)
    const answers = (job.giveUp ?? options.giveUp) === 'response'
    const call = new RemoteCall<T>(++seq, job, sink, deadlineAt, validAmount(job.retryBudget, options.retryBudget), answers)
    const untyped = call as unknown as RemoteCall<unknown>
    calls.set(call.id, untyped)
    if (signal !== undefined) {
      call.onAbort = () => {
        if (!end(untyped)) return
        // The cancel goes first: the leader ends the attempt at once, not as a failure it might retry.
        leaveCall(untyped)
        call.running?.controller.abort(signal.reason)
        sink.reject(signal.reason)
      }
      signal.addEventListener('abort', call.onAbort)
    }
    if (Number.isFinite(deadlineAt)) {
      // The leader ends the call at its deadline (earlier when it knows the next attempt comes too late);
      // this timer only covers a leader that vanished first. An attempt in flight is abandoned.
      const timer = startTimer(
        clock,
        Math.max(0, deadlineAt - now()),
        () => {
          if (!end(untyped)) return
          leaveCall(untyped)
          giveUp(untyped, new DeadlineError(`polite-fetch: deadline reached for ${job.label ?? job.scope}`, { request: job.label, attempts: call.attempts }), undefined)
        },
        undefined,
      )
      call.stopTimer = () => cancelTimer(clock, timer)
    }
    submitTo(untyped)
  }

  return {
    submit,
    leaderChanged(scope, leader) {
      for (const call of [...calls.values()]) if (call.scope === scope && call.submittedTo !== leader) recover(call)
    },
    onMessage,
    leaderLeft() {
      // An attempt in flight decides alone when it comes back (recover), as after a handover.
      for (const call of calls.values()) call.submittedTo = undefined
    },
    scopes: () => new Set([...calls.values()].map((call) => call.scope)),
    closeAll() {
      for (const call of [...calls.values()]) {
        if (!end(call)) continue
        call.running?.controller.abort(new ClosedError('polite-fetch: the limiter was closed'))
        call.discardAll()
        call.sink.reject(new ClosedError('polite-fetch: the limiter was closed', { request: call.job.label, attempts: call.attempts }))
      }
    },
  }
}
