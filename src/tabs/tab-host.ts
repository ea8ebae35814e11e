// The leader's side of a shared lane: each follower call becomes a RemoteJob in the
// leader's own limiter, so it queues, is paced and is retried exactly like the leader's
// own calls. An attempt of a RemoteJob is a grant: the follower sends the request and
// answers with what the response said; the final response never leaves the follower.
import type { Limiter } from '../client/create-limiter.js'
import type { LimiterEventName } from '../client/limiter-events.js'
import type { AttemptOutcome, AttemptReport, Job, Settlement } from '../client/limiter-types.js'
import type { Signal } from '../core/types.js'
import { TAB_MESSAGE, tabMessage, type CallSpec, type TabMessage, type TabPayload } from '../protocol/tab-messages.js'
import { toCloneable } from '../protocol/worker-messages.js'
import type { TabChannel } from './tab-channel.js'
import type { Presence } from './tab-presence.js'
import { toErrorData } from './tab-errors.js'

/**
 * Every event a limiter emits (the compiler keeps it in step with LimiterEvents). A subscribe
 * naming anything else is not asked of the limiter: one error per unknown name of a message
 * with 100,000 of them took seconds and grew the subscriber's set without bound.
 */
const LIMITER_EVENTS: Record<LimiterEventName, true> = { attempt: true, throttled: true, retry: true, rate: true, 'give-up': true, split: true }
const isLimiterEvent = (name: string): name is LimiterEventName => Object.hasOwn(LIMITER_EVENTS, name)

/** Which attempt of a follower call produced the final outcome. */
interface AttemptRef {
  attempt: number
}

/** A follower's attempt failed without a response; the follower keeps the real error. */
class RemoteFailure extends Error {
  readonly attempt: number
  readonly finalReason: string | undefined
  constructor(name: string, message: string, attempt: number, finalReason: string | undefined) {
    super(message)
    this.name = name
    this.attempt = attempt
    this.finalReason = finalReason
  }
}

function discardRemote(this: AttemptOutcome<AttemptRef> & { job: RemoteJob }): void {
  // Once the call has ended, the follower has let go of every response already.
  if (!this.job.settled) this.job.send({ type: TAB_MESSAGE.discard, id: this.job.id, attempt: this.value.attempt })
}

class RemoteJob implements Job<AttemptRef>, Settlement<AttemptRef> {
  readonly host: HostContext
  readonly tab: string
  readonly id: number
  readonly key: string
  scope: string
  readonly cost: number
  readonly priority: number | undefined
  readonly deadlineMs: number
  readonly retryBudget: number
  readonly retryErrors: boolean
  readonly label: string | undefined
  readonly route: string | undefined
  readonly optionalAttemptSignal = true
  /** The follower answers its own give-ups (it holds the responses); the lane only decides them. */
  readonly giveUp = 'throw' as const
  readonly controller = new AbortController()
  readonly signal = this.controller.signal
  readonly attemptsDone: number
  /** The grant awaiting the follower's answer. */
  pending: { attempt: number; report: AttemptReport<AttemptRef>; stopWatch: () => void } | undefined
  /** Settled silently: the follower cancelled, left, or this tab stopped leading. */
  silenced = false
  /**
   * The lane ended the call (resolve or reject). A grant still out (a deadline passed in flight)
   * keeps the job known until the follower answers it, so the lane hears that attempt end.
   */
  settled = false

  constructor(host: HostContext, tab: string, id: number, spec: CallSpec, now: number) {
    this.host = host
    this.tab = tab
    this.id = id
    this.key = `${tab}:${id}`
    this.scope = spec.scope
    this.cost = spec.cost
    this.priority = spec.priority
    this.deadlineMs = Math.max(0, spec.deadlineAt - now)
    this.retryBudget = spec.retryBudget
    this.retryErrors = spec.retryErrors
    this.label = spec.label
    this.route = spec.route
    this.attemptsDone = spec.attemptsDone
  }

  send(payload: TabPayload): void {
    if (!this.silenced) this.host.send(payload, this.tab)
  }

  start(attemptSignal: AbortSignal | undefined, attemptNumber: number, report: AttemptReport<AttemptRef>): void {
    const attempt = this.attemptsDone + attemptNumber
    // A per-attempt timeout (the limiter's `timeoutMs`) aborts the follower's request.
    let stopWatch = () => {}
    if (attemptSignal !== undefined && attemptSignal !== this.signal) {
      const onAbort = () => this.send({ type: TAB_MESSAGE.abortAttempt, id: this.id, attempt, error: toErrorData(attemptSignal.reason) })
      attemptSignal.addEventListener('abort', onAbort, { once: true })
      stopWatch = () => attemptSignal.removeEventListener('abort', onAbort)
    }
    this.pending = { attempt, report, stopWatch }
    this.send({ type: TAB_MESSAGE.grant, id: this.id, attempt })
  }

  attempt(attemptSignal: AbortSignal | undefined, attemptNumber: number): Promise<AttemptOutcome<AttemptRef>> {
    return new Promise((resolve, reject) => this.start(attemptSignal, attemptNumber, { done: resolve, failed: reject }))
  }

  /** The follower's answer to the pending grant; answers to anything else are ignored. */
  answer(attempt: number, outcome: AttemptOutcome<AttemptRef> | undefined, failure: RemoteFailure | undefined): void {
    const pending = this.pending
    if (pending === undefined || pending.attempt !== attempt) return
    this.pending = undefined
    pending.stopWatch()
    if (outcome !== undefined) pending.report.done(outcome)
    else pending.report.failed(failure)
    if (this.settled) this.host.forget(this)
  }

  /**
   * Nobody will answer the pending grant (the follower cancelled, left, or answers another
   * leader now): end the attempt in the lane, or the lane counts it in flight for ever.
   */
  abandon(reason: unknown): void {
    const pending = this.pending
    if (pending === undefined) return
    this.pending = undefined
    pending.stopWatch()
    pending.report.failed(reason)
  }

  finalFailure(error: unknown): string | undefined {
    return error instanceof RemoteFailure ? error.finalReason : undefined
  }

  learnRoute(policy: string): void {
    this.send({ type: TAB_MESSAGE.learnRoute, id: this.id, policy })
  }

  resolve(value: AttemptRef): void {
    this.host.forget(this)
    this.send({ type: TAB_MESSAGE.settle, id: this.id, attempt: value.attempt })
  }

  reject(error: unknown): void {
    this.host.forget(this)
    // The attempt's own transport error is final: the follower rejects with the real one it kept.
    if (error instanceof RemoteFailure) this.send({ type: TAB_MESSAGE.settle, id: this.id, attempt: error.attempt })
    else this.send({ type: TAB_MESSAGE.reject, id: this.id, error: toErrorData(error) })
  }
}

interface HostContext {
  send(payload: TabPayload, to: string): void
  /** The lane is done with the job (it ended, and no grant of it is unanswered). */
  forget(job: RemoteJob): void
}

export interface TabHostOptions {
  tabId: string
  channel: TabChannel
  limiter: Limiter
  /** Does this tab lead `scope` now? Calls for other scopes are not ours to run. */
  leads(scope: string): boolean
  now(): number
  /** Tells when a tab that sent calls dies without a bye (a crash); none: only bye tells. */
  presence?: Presence
  onError?: (error: unknown) => void
}

export interface TabHost {
  onMessage(message: TabMessage): void
  /** Stop serving `scope` (another tab leads it now): its calls end here without a word, the followers resubmit. */
  drop(scope: string): void
  /** Follower calls in this leader's lanes. */
  readonly size: number
  /** Resolves once no follower call is left (a service worker keeps itself alive until then). */
  idle(): Promise<void>
  /** Silence every call (this tab is closing; the followers resubmit to the next leader). */
  close(): void
}

export function createTabHost(options: TabHostOptions): TabHost {
  const { tabId, channel, limiter, leads, now } = options
  const report = options.onError ?? (() => {})
  const jobs = new Map<string, RemoteJob>()
  /** tab → limiter events it wants; the leader listens to the union. */
  const subscribers = new Map<string, Set<string>>()
  const listening = new Set<string>()
  let closed = false
  let idleWaiters: (() => void)[] = []
  const checkIdle = () => {
    if (jobs.size > 0 || idleWaiters.length === 0) return
    const waiters = idleWaiters
    idleWaiters = []
    for (const wake of waiters) wake()
  }

  const context: HostContext = {
    send: (payload, to) => {
      if (!closed) channel.post(tabMessage(payload, tabId, to))
    },
    forget: (job) => {
      job.settled = true
      if (job.pending !== undefined) return
      if (jobs.get(job.key) === job) jobs.delete(job.key)
      checkIdle()
    },
  }

  const silence = (job: RemoteJob) => {
    job.silenced = true
    if (jobs.get(job.key) === job) jobs.delete(job.key)
    checkIdle()
    const left = new DOMException('polite-fetch: the call left this leader', 'AbortError')
    job.controller.abort(left)
    job.abandon(left)
  }

  const listen = (event: LimiterEventName) => {
    if (listening.has(event)) return
    try {
      limiter.on(event, (detail: unknown) => {
        if (closed || subscribers.size === 0) return
        channel.post(tabMessage({ type: TAB_MESSAGE.event, event, detail: toCloneable(detail) }, tabId))
      })
      listening.add(event)
    } catch (error) {
      report(error)
    }
  }

  /** The tab is gone: its calls end, nobody is left to send them. */
  const leave = (tab: string) => {
    for (const job of [...jobs.values()]) if (job.tab === tab) silence(job)
    subscribers.delete(tab)
  }
  const watch = (tab: string) => options.presence?.watch(tab, () => leave(tab))

  const outcomeOf = (job: RemoteJob, attempt: number, signal: Signal, retryable: boolean, neutral: boolean, reason: string | undefined) => {
    const outcome = { job, signal, value: { attempt }, retryable, neutral, reason } as AttemptOutcome<AttemptRef> & { job: RemoteJob }
    outcome.discard = discardRemote
    return outcome
  }

  return {
    get size() {
      return jobs.size
    },
    idle() {
      if (jobs.size === 0) return Promise.resolve()
      return new Promise<void>((resolve) => idleWaiters.push(resolve))
    },
    onMessage(message) {
      if (closed || message.from === tabId) return
      if (message.to !== undefined && message.to !== tabId) return
      const key = 'id' in message ? `${message.from}:${message.id}` : ''
      switch (message.type) {
        case TAB_MESSAGE.call: {
          // A resubmission after a lost message, or a call for a scope we do not lead: ignore.
          if (jobs.has(key) || !leads(message.call.scope)) return
          watch(message.from)
          const job = new RemoteJob(context, message.from, message.id, message.call, now())
          jobs.set(key, job)
          limiter.submit(job, job)
          return
        }
        case TAB_MESSAGE.cancel: {
          const job = jobs.get(key)
          if (job) silence(job)
          return
        }
        case TAB_MESSAGE.outcome:
          jobs.get(key)?.answer(
            message.attempt,
            outcomeOf(jobs.get(key) as RemoteJob, message.attempt, message.signal, message.retryable, message.neutral, message.reason),
            undefined,
          )
          return
        case TAB_MESSAGE.failed:
          jobs
            .get(key)
            ?.answer(message.attempt, undefined, new RemoteFailure(message.error.name, message.error.message, message.attempt, message.finalReason))
          return
        case TAB_MESSAGE.bye: {
          if (message.scope !== undefined) return
          options.presence?.unwatch(message.from)
          leave(message.from)
          return
        }
        case TAB_MESSAGE.subscribe: {
          watch(message.from)
          const set = subscribers.get(message.from) ?? new Set<string>()
          for (const event of message.events) {
            if (!isLimiterEvent(event)) continue
            set.add(event)
            listen(event)
          }
          subscribers.set(message.from, set)
          return
        }
        case TAB_MESSAGE.stats: {
          if (!leads(message.scope)) return
          const stats = limiter.stats().filter((lane) => lane.scope === message.scope || lane.scope.startsWith(`${message.scope}#`))
          context.send({ type: TAB_MESSAGE.statsReply, scope: message.scope, id: message.id, stats: toCloneable(stats) }, message.from)
          return
        }
        default:
      }
    },
    drop(scope) {
      for (const job of [...jobs.values()]) if (job.scope === scope || job.scope.startsWith(`${scope}#`)) silence(job)
    },
    close() {
      for (const job of [...jobs.values()]) silence(job)
      closed = true
    },
  }
}
