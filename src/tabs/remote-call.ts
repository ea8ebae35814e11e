// A follower's call whose lane another tab leads. The follower keeps the job (and so the
// request, its body, every response and every transport error) and runs each attempt
// itself when the leader grants it; the leader hears only what each response said and
// answers with the call's end: "settle with attempt n" or a typed error.
import type { AttemptOutcome, Job, Settlement } from '../client/limiter-types.js'

/** What one attempt left in the follower: its response (outcome) or its transport error. */
export interface AttemptResult<T> {
  outcome: AttemptOutcome<T> | undefined
  error: unknown
}

export class RemoteCall<T> {
  readonly id: number
  readonly job: Job<T>
  readonly sink: Settlement<T>
  /** The lane it was submitted to (job.scope may change later, when a route splits). */
  readonly scope: string
  /** Epoch ms: set once when the call began, sent to every leader, so no handover restarts it. */
  readonly deadlineAt: number
  /** The call's whole retry budget, as its caller gave it (not what is left: see budgetFromHere). */
  readonly retryBudget: number
  /** Attempts sent so far, under any leader. */
  attempts = 0
  /** The leader the call is submitted to; undefined while waiting for one. */
  submittedTo: string | undefined = undefined
  /** The attempt in flight, with the controller that aborts it. */
  running: { attempt: number; controller: AbortController; grantedBy: string } | undefined = undefined
  /** Answers of attempts the leader has not decided on yet (normally at most one). */
  readonly results = new Map<number, AttemptResult<T>>()
  done = false
  /**
   * With `giveUp: 'response'`: the newest response the leader had retried (status and headers,
   * its body released), which a later give-up answers with, as the tab's own lane does.
   */
  lastAnswer: AttemptOutcome<T> | undefined = undefined
  /** Cancels the call's deadline timer (set through the limiter's clock). */
  stopTimer: (() => void) | undefined = undefined
  onAbort: (() => void) | undefined = undefined

  /** Whether a give-up (deadline, retry budget, a too-long Retry-After) answers with the server's response. */
  readonly answersGiveUps: boolean

  constructor(id: number, job: Job<T>, sink: Settlement<T>, deadlineAt: number, retryBudget: number, answersGiveUps: boolean) {
    this.id = id
    this.answersGiveUps = answersGiveUps
    this.job = job
    this.sink = sink
    this.scope = job.scope
    this.deadlineAt = deadlineAt
    this.retryBudget = retryBudget
  }

  /**
   * The retry budget of a lane whose first attempt is this call's next one. Every attempt
   * already sent but the first was a retry, and the next is one too, so `attempts` retries are
   * spent. A leader that left after deciding a retry had spent it without sending it: with the
   * whole budget again, the next leader let one call make more than retryBudget + 1 attempts.
   * Negative when the call has no attempt left.
   */
  budgetFromHere(): number {
    return this.retryBudget - this.attempts
  }

  /** Ends the call (once): releases responses nobody will read, stops listening. */
  finish(): boolean {
    if (this.done) return false
    this.done = true
    this.stopTimer?.()
    if (this.onAbort) this.job.signal?.removeEventListener('abort', this.onAbort)
    return true
  }

  /** Release the response of an attempt that will not be the answer. */
  discard(attempt: number): void {
    const result = this.results.get(attempt)
    this.results.delete(attempt)
    const outcome = result?.outcome
    outcome?.discard?.()
    if (this.answersGiveUps && isAnswer(outcome)) this.lastAnswer = outcome
  }

  /** The response a give-up answers with: the newest attempt's, kept whole, or the last one retried. */
  takeAnswer(): AttemptOutcome<T> | undefined {
    const newest = this.results.get(this.attempts)?.outcome
    if (!isAnswer(newest)) return this.lastAnswer
    this.results.delete(this.attempts)
    return newest
  }

  discardAll(): void {
    for (const attempt of [...this.results.keys()]) this.discard(attempt)
  }
}

/** A response from the server (not a transport error) that can stand in for a give-up. */
function isAnswer<T>(outcome: AttemptOutcome<T> | undefined): outcome is AttemptOutcome<T> {
  return outcome !== undefined && outcome.signal.status > 0 && outcome.gaveUp !== undefined
}
