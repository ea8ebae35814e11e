// One lane per scope across the tabs of an origin, without a service worker. Each tab has
// a limiter; for every scope the tabs elect one leader (leader-election.ts), and only the
// leader's lane paces that scope: a follower's calls are queued, paced and retried in the
// leader's lane (tab-host.ts), while the follower itself sends every attempt it is granted
// and keeps every response (remote-call.ts). A Limiter, so `createClient({ limiter })`
// puts the tab's fetch shell on it unchanged.
import { createLimiter, type Limiter } from '../client/create-limiter.js'
import { ClosedError, DeadlineError, RetryBudgetError } from '../client/errors.js'
import type { ScopeStats } from '../client/lane.js'
import type { LimiterEventName, Listener } from '../client/limiter-events.js'
import type { AttemptOutcome, AttemptReport, Job, Settlement } from '../client/limiter-types.js'
import { resolveLimiterOptions, type LimiterOptions } from '../client/options.js'
import type { Signal } from '../core/types.js'
import { TAB_MESSAGE, tabMessage, type SignalData, type TabMessage, type TabPayload } from '../protocol/tab-messages.js'
import { createElection, fixedLeader, type ElectionEvents, type LockManagerLike } from './leader-election.js'
import { RemoteCall } from './remote-call.js'
import { broadcastTabChannel, type TabChannel } from './tab-channel.js'
import { fromErrorData, toErrorData } from './tab-errors.js'
import { createTabHost } from './tab-host.js'

export interface TabLimiterOptions extends LimiterOptions {
  /** Tabs share lanes with the tabs of the same group (default `polite-fetch`). */
  group?: string
  /** The wire to the other tabs (default: the group's BroadcastChannel); `null` shares nothing. */
  channel?: TabChannel | null
  /** `navigator.locks` by default; `null` forces the BroadcastChannel election. */
  locks?: LockManagerLike | null
  /** This tab's id (default a random UUID). */
  tabId?: string
  /**
   * Every scope is led by this party instead of an elected tab: the service worker
   * (`SERVICE_WORKER_TAB_ID`), reached through `channel`, for a page it does not control.
   */
  leader?: string
  /** Told about absorbed failures (a listener that threw, a message that could not be posted). */
  onError?: (error: unknown) => void
}

export interface TabLaneInfo {
  /** Whether calls of this tab share lanes with the other tabs. */
  shared: boolean
  tabId: string
  /** Scope → the tab leading it (this tab's id when it leads), for every scope this tab used. */
  leaders: Record<string, string | undefined>
}

export interface TabLimiter extends Limiter {
  readonly tabId: string
  info(): TabLaneInfo
  /** Stats of every lane this tab uses: its own, and those the leaders answer for within `timeoutMs`. */
  sharedStats(timeoutMs: number): Promise<ScopeStats[]>
}

function randomId(): string {
  const crypto = globalThis.crypto
  return typeof crypto?.randomUUID === 'function' ? crypto.randomUUID() : Math.random().toString(36).slice(2)
}

function defaultLocks(): LockManagerLike | undefined {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks
  return typeof locks?.request === 'function' ? locks : undefined
}

function toSignalData(signal: Signal): SignalData {
  const data: SignalData = { kind: signal.kind, status: signal.status }
  if (signal.retryAt !== undefined) data.retryAt = signal.retryAt
  if (signal.remaining !== undefined) data.remaining = signal.remaining
  if (signal.resetAt !== undefined) data.resetAt = signal.resetAt
  if (signal.limit !== undefined) data.limit = signal.limit
  if (signal.policy !== undefined) data.policy = signal.policy
  return data
}

const validAmount = (value: unknown, fallback: number) => (typeof value === 'number' && value >= 0 ? value : fallback)

export function createTabLimiter(options: TabLimiterOptions = {}): TabLimiter {
  const { group = 'polite-fetch', channel: channelOption, locks: locksOption, tabId: idOption, leader: fixed, onError, ...limiterOptions } = options
  const report = onError ?? (() => {})
  const tabId = idOption ?? randomId()
  const resolved = resolveLimiterOptions(limiterOptions)
  const local = createLimiter(limiterOptions)
  const now = () => resolved.clock.now()
  const channel = channelOption === undefined ? broadcastTabChannel(group, report) : (channelOption ?? undefined)
  if (channel === undefined) {
    return { ...local, tabId, info: () => ({ shared: false, tabId, leaders: {} }), sharedStats: async () => local.stats() }
  }

  const calls = new Map<number, RemoteCall<unknown>>()
  const remoteListeners = new Map<string, Set<(detail: unknown) => void>>()
  const statsWaiters = new Map<number, (stats: unknown) => void>()
  let seq = 0
  let closed = false

  const post = (payload: TabPayload, to?: string) => {
    if (!closed) channel.post(tabMessage(payload, tabId, to))
  }
  const subscribeRemote = () => {
    if (remoteListeners.size > 0) post({ type: TAB_MESSAGE.subscribe, events: [...remoteListeners.keys()] })
  }

  const events: ElectionEvents = {
    lead(scope) {
      for (const call of [...calls.values()]) if (call.scope === scope) recover(call)
    },
    follow(scope, leader) {
      host.drop(scope)
      if (leader === undefined) return
      subscribeRemote()
      for (const call of [...calls.values()]) if (call.scope === scope && call.submittedTo !== leader) recover(call)
    },
  }
  const election =
    fixed !== undefined
      ? fixedLeader(fixed)
      : createElection({ tabId, group, channel, locks: locksOption === null ? undefined : (locksOption ?? defaultLocks()), onError: report, events })
  const host = createTabHost({ tabId, channel, limiter: local, now, onError: report, leads: (scope) => election.leaderOf(scope) === tabId })

  const end = (call: RemoteCall<unknown>): boolean => {
    if (!call.finish()) return false
    calls.delete(call.id)
    return true
  }

  /** Hand the call to whoever leads its scope now: this tab's own lane, another tab, or nobody yet. */
  const submitTo = (call: RemoteCall<unknown>) => {
    const leader = election.leaderOf(call.scope)
    call.submittedTo = undefined
    if (leader === undefined) return // sent on the next hello
    if (leader === tabId) {
      if (!end(call)) return
      const remainingMs = call.deadlineAt - now()
      if (remainingMs <= 0) {
        call.sink.reject(new DeadlineError(`polite-fetch: deadline reached for ${call.job.label ?? call.scope}`, { request: call.job.label, attempts: call.attempts }))
        return
      }
      call.job.deadlineMs = remainingMs
      call.job.retryBudget = call.retryBudget
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
          retryBudget: call.retryBudget,
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
      const retry =
        outcome !== undefined
          ? outcome.retryable && outcome.neutral !== true && outcome.signal.kind !== 'ok'
          : call.job.retryErrors === true && call.job.finalFailure?.(error) === undefined
      if (!retry || call.retryBudget <= 0) {
        if (!end(call)) return
        call.results.delete(call.attempts)
        call.discardAll()
        if (!retry) {
          if (outcome !== undefined) call.sink.resolve(outcome.value)
          else call.sink.reject(error)
        } else {
          outcome?.discard?.()
          call.sink.reject(new RetryBudgetError('polite-fetch: retry budget used up', { request: call.job.label, attempts: call.attempts }))
        }
        return
      }
      call.retryBudget--
      call.discardAll()
    }
    submitTo(call)
  }

  const attemptEnded = (call: RemoteCall<unknown>, attempt: number, outcome: AttemptOutcome<unknown> | undefined, error: unknown) => {
    const grantedBy = call.running?.attempt === attempt ? call.running.grantedBy : undefined
    if (grantedBy !== undefined) call.running = undefined
    if (call.done) {
      outcome?.discard?.()
      return
    }
    call.results.set(attempt, { outcome, error })
    const leader = call.submittedTo
    if (leader === undefined || leader !== grantedBy || election.leaderOf(call.scope) !== leader) {
      recover(call)
      return
    }
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

  const onFollowerMessage = (message: TabMessage) => {
    if (message.to !== undefined && message.to !== tabId) return
    if (message.type === TAB_MESSAGE.event) {
      for (const listener of remoteListeners.get(message.event) ?? []) {
        try {
          listener(message.detail)
        } catch (error) {
          report(error)
        }
      }
      return
    }
    if (message.type === TAB_MESSAGE.statsReply) {
      statsWaiters.get(message.id)?.(message.stats)
      return
    }
    if (!('id' in message)) return
    const call = calls.get(message.id)
    // Only the leader the call is submitted to speaks for it: a stale grant from a leader
    // that handed over must not send a request twice.
    if (call === undefined || call.done || call.submittedTo !== message.from) return
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
        call.discardAll()
        call.sink.reject(fromErrorData(message.error))
        return
      case TAB_MESSAGE.learnRoute:
        call.job.learnRoute?.(message.policy)
        return
      default:
    }
  }

  const stopListening = channel.listen((message) => {
    election.onMessage(message)
    host.onMessage(message)
    onFollowerMessage(message)
  })

  const leaveCall = (call: RemoteCall<unknown>) => {
    if (call.submittedTo !== undefined) post({ type: TAB_MESSAGE.cancel, id: call.id }, call.submittedTo)
    call.discardAll()
  }

  function submit<T>(job: Job<T>, sink: Settlement<T>): void {
    if (closed) {
      sink.reject(new ClosedError('polite-fetch: the limiter is closed', { request: job.label }))
      return
    }
    if (job === null || typeof job !== 'object' || typeof job.scope !== 'string') {
      local.submit(job, sink) // the limiter's own validation and error
      return
    }
    const signal = job.signal
    if (signal?.aborted) {
      sink.reject(signal.reason)
      return
    }
    election.join(job.scope)
    if (election.leaderOf(job.scope) === tabId) {
      local.submit(job, sink)
      return
    }
    const deadlineAt = now() + validAmount(job.deadlineMs, resolved.deadlineMs)
    const call = new RemoteCall<T>(++seq, job, sink, deadlineAt, validAmount(job.retryBudget, resolved.retryBudget))
    const untyped = call as unknown as RemoteCall<unknown>
    calls.set(call.id, untyped)
    if (signal !== undefined) {
      call.onAbort = () => {
        if (!end(untyped)) return
        call.running?.controller.abort(signal.reason)
        leaveCall(untyped)
        sink.reject(signal.reason)
      }
      signal.addEventListener('abort', call.onAbort)
    }
    if (Number.isFinite(deadlineAt)) {
      // The leader ends the call at its deadline (earlier when it knows the next attempt comes too late);
      // this timer only covers a leader that vanished first. An attempt in flight is abandoned.
      call.timer = setTimeout(() => {
        if (!end(untyped)) return
        leaveCall(untyped)
        sink.reject(new DeadlineError(`polite-fetch: deadline reached for ${job.label ?? job.scope}`, { request: job.label, attempts: call.attempts }))
      }, Math.max(0, deadlineAt - now()))
    }
    submitTo(untyped)
  }

  const close = async (): Promise<void> => {
    if (closed) return
    post({ type: TAB_MESSAGE.bye })
    election.close()
    host.close()
    closed = true
    for (const call of [...calls.values()]) {
      if (!end(call)) continue
      call.running?.controller.abort(new ClosedError('polite-fetch: the limiter was closed'))
      call.discardAll()
      call.sink.reject(new ClosedError('polite-fetch: the limiter was closed', { request: call.job.label, attempts: call.attempts }))
    }
    for (const resolve of statsWaiters.values()) resolve(undefined)
    stopListening()
    globalThis.removeEventListener?.('pagehide', onPageHide)
    await local.close()
    channel.close()
  }
  // A closing tab says so: its followers resubmit to the next leader at once, its leader drops its calls.
  const onPageHide = () => void close()
  globalThis.addEventListener?.('pagehide', onPageHide)

  return {
    tabId,
    run<T>(job: Job<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => submit(job, { resolve, reject }))
    },
    submit,
    stats: () => local.stats(),
    lanes: () => local.lanes(),
    on<E extends LimiterEventName>(event: E, listener: Listener<E>): () => void {
      const offLocal = local.on(event, listener) // throws for a name the limiter does not emit
      const set = remoteListeners.get(event) ?? new Set()
      const first = set.size === 0
      set.add(listener as (detail: unknown) => void)
      remoteListeners.set(event, set)
      if (first) subscribeRemote()
      return () => {
        offLocal()
        set.delete(listener as (detail: unknown) => void)
        if (set.size === 0) remoteListeners.delete(event)
      }
    },
    info: () => ({ shared: true, tabId, leaders: election.leaders() }),
    async sharedStats(timeoutMs) {
      const own = local.stats()
      const asks: Promise<unknown>[] = []
      for (const [scope, leader] of Object.entries(election.leaders())) {
        if (leader === undefined || leader === tabId) continue
        const id = ++seq
        asks.push(
          new Promise<unknown>((resolve) => {
            const timer = setTimeout(() => done(undefined), timeoutMs)
            const done = (stats: unknown) => {
              clearTimeout(timer)
              statsWaiters.delete(id)
              resolve(stats)
            }
            statsWaiters.set(id, done)
            post({ type: TAB_MESSAGE.stats, scope, id }, leader)
          }),
        )
      }
      const replies = await Promise.all(asks)
      return [...own, ...replies.flatMap((stats) => (Array.isArray(stats) ? (stats as ScopeStats[]) : []))]
    },
    close,
  }
}
