// Limiter jobs whose attempts the test answers by hand: each attempt is parked until
// the test resolves it with a signal (or fails it), so a test decides exactly when
// each response "arrives" in virtual time.
import type { Signal } from '../../src/core/types.js'
import type { AttemptOutcome, Job } from '../../src/client/limiter-types.js'

export interface ParkedAttempt {
  job: ScriptedJob
  number: number
  signal: AbortSignal
  /** Answers the attempt with a signal; the call's value is `${label}#${number}`. */
  answer(signal: Signal, extra?: Partial<AttemptOutcome<string>>): void
  fail(error: unknown): void
  discarded: boolean
}

export class ScriptedJob implements Job<string> {
  readonly attempts: ParkedAttempt[] = []
  scope: string
  label: string
  signal?: AbortSignal
  retryErrors?: boolean
  priority?: number
  deadlineMs?: number
  retryBudget?: number
  cost?: number
  readonly #onAttempt: (attempt: ParkedAttempt) => void

  constructor(scope: string, label: string, onAttempt: (attempt: ParkedAttempt) => void, extra: Partial<Job<string>> = {}) {
    this.scope = scope
    this.label = label
    this.#onAttempt = onAttempt
    Object.assign(this, extra)
  }

  attempt(attemptSignal: AbortSignal | undefined, number: number): Promise<AttemptOutcome<string>> {
    if (attemptSignal === undefined) throw new Error('this job did not set optionalAttemptSignal')
    const signal = attemptSignal
    return new Promise((resolve, reject) => {
      const parked: ParkedAttempt = {
        job: this,
        number,
        signal,
        discarded: false,
        answer: (answer, extra = {}) =>
          resolve({
            signal: answer,
            value: `${this.label}#${number}`,
            retryable: true,
            discard: () => {
              parked.discarded = true
            },
            ...extra,
          }),
        fail: reject,
      }
      // Like fetch: an aborted attempt rejects with the signal's reason.
      signal.addEventListener('abort', () => reject(signal.reason), { once: true })
      this.attempts.push(parked)
      this.#onAttempt(parked)
    })
  }
}

/** Collects every parked attempt of every job, in the order the limiter started them. */
export class AttemptLog {
  readonly started: ParkedAttempt[] = []

  job(scope: string, label: string, extra: Partial<Job<string>> = {}): ScriptedJob {
    return new ScriptedJob(scope, label, (attempt) => this.started.push(attempt), extra)
  }

  /** Labels and attempt numbers in start order, e.g. ['a#1', 'b#1', 'a#2']. */
  order(): string[] {
    return this.started.map((a) => `${a.job.label}#${a.number}`)
  }

  last(): ParkedAttempt {
    const attempt = this.started[this.started.length - 1]
    if (attempt === undefined) throw new Error('no attempt started')
    return attempt
  }
}

export const ok: Signal = { kind: 'ok', status: 200 }
export const throttled = (retryAt?: number): Signal =>
  retryAt === undefined ? { kind: 'throttled', status: 429 } : { kind: 'throttled', status: 429, retryAt }
export const overloaded: Signal = { kind: 'overloaded', status: 503 }
export const networkError: Signal = { kind: 'error', status: 0 }

/** Tracks whether a promise settled, without awaiting it. */
export function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown; promise: Promise<T> } {
  const state: { settled: boolean; value?: T; error?: unknown; promise: Promise<T> } = { settled: false, promise }
  promise.then(
    (value) => {
      state.settled = true
      state.value = value
    },
    (error: unknown) => {
      state.settled = true
      state.error = error
    },
  )
  return state
}
