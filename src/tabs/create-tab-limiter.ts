// One lane per scope across the tabs of an origin, without a service worker. Each tab has
// a limiter; for every scope the tabs elect one leader (leader-election.ts), and only the
// leader's lane paces that scope: a follower's calls are queued, paced and retried in the
// leader's lane (tab-host.ts), while the follower itself sends every attempt it is granted
// and keeps every response (follower-calls.ts). A Limiter, so `createClient({ limiter })`
// puts the tab's fetch shell on it unchanged.
import { createLimiter, type Limiter } from '../client/create-limiter.js'
import { ClosedError } from '../client/errors.js'
import type { ScopeStats } from '../client/lane.js'
import type { LimiterEventName, Listener } from '../client/limiter-events.js'
import type { Job, Settlement } from '../client/limiter-types.js'
import { resolveLimiterOptions, type LimiterOptions } from '../client/options.js'
import { TAB_MESSAGE, tabMessage, type TabPayload } from '../protocol/tab-messages.js'
import { createFollowerCalls } from './follower-calls.js'
import { createElection, fixedLeader, type Election, type ElectionEvents, type LockManagerLike } from './leader-election.js'
import { followPageLifecycle } from './page-lifecycle.js'
import { broadcastTabChannel, type TabChannel } from './tab-channel.js'
import { createTabHost, type TabHost } from './tab-host.js'
import { lockPresence, type Presence } from './tab-presence.js'

export interface TabLimiterOptions extends LimiterOptions {
  /** Tabs share lanes with the tabs of the same group (default `polite-fetch`). */
  group?: string
  /** The wire to the other tabs (default: the group's BroadcastChannel); `null` shares nothing. */
  channel?: TabChannel | null
  /** `navigator.locks` by default; `null` forces the BroadcastChannel election. */
  locks?: LockManagerLike | null
  /** This tab's id (default a random UUID); unique per origin, as it names the tab's presence lock. */
  tabId?: string
  /**
   * Every scope is led by this party instead of an elected tab: the service worker
   * (`SERVICE_WORKER_TAB_ID`), reached through `channel`, for a page it does not control.
   */
  leader?: string
  /** Told about absorbed failures (a listener that threw, a message that could not be posted). */
  onError?: (error: unknown) => void
  /** Where `pagehide` and `pageshow` come from (default: the global scope); `null` follows none. */
  pageEvents?: EventTarget | null
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

export function createTabLimiter(options: TabLimiterOptions = {}): TabLimiter {
  const { group = 'polite-fetch', channel: channelOption, locks: locksOption, tabId: idOption, leader: fixed, onError, pageEvents = globalThis as Partial<EventTarget>, ...limiterOptions } = options
  const report = onError ?? (() => {})
  const tabId = idOption ?? randomId()
  const resolved = resolveLimiterOptions(limiterOptions)
  const local = createLimiter(limiterOptions)
  const now = () => resolved.clock.now()
  const channel = channelOption === undefined ? broadcastTabChannel(group, report) : (channelOption ?? undefined)
  if (channel === undefined) {
    return { ...local, tabId, info: () => ({ shared: false, tabId, leaders: {} }), sharedStats: async () => local.stats() }
  }

  const remoteListeners = new Map<string, Set<(detail: unknown) => void>>()
  const statsWaiters = new Map<number, (stats: unknown) => void>()
  let statsSeq = 0
  let closed = false

  const post = (payload: TabPayload, to?: string) => {
    if (!closed) channel.post(tabMessage(payload, tabId, to))
  }
  const subscribeRemote = () => {
    if (remoteListeners.size > 0) post({ type: TAB_MESSAGE.subscribe, events: [...remoteListeners.keys()] })
  }

  const events: ElectionEvents = {
    lead(scope) {
      followers.leaderChanged(scope, tabId)
    },
    follow(scope, leader) {
      host.drop(scope)
      if (leader === undefined) return
      subscribeRemote()
      followers.leaderChanged(scope, leader)
    },
  }
  const locks = locksOption === null ? undefined : (locksOption ?? defaultLocks())
  // This tab's part in the group: new each time it joins (again, after the back/forward cache).
  let presence: Presence
  let election: Election
  let host: TabHost
  let away = false
  const joinGroup = () => {
    presence = lockPresence(locks, tabId, report)
    election = fixed !== undefined ? fixedLeader(fixed) : createElection({ tabId, group, channel, locks, onError: report, events })
    host = createTabHost({ tabId, channel, limiter: local, now, presence, onError: report, leads: (scope) => election.leaderOf(scope) === tabId })
  }
  /** Say bye, release every lock, drop the calls held for other tabs (their tabs resubmit them). */
  const leaveGroup = () => {
    post({ type: TAB_MESSAGE.bye })
    election.close()
    host.close()
    presence.close()
  }
  joinGroup()
  const followers = createFollowerCalls({
    tabId,
    local,
    leaderOf: (scope) => election.leaderOf(scope),
    post,
    clock: resolved.clock,
    deadlineMs: resolved.deadlineMs,
    retryBudget: resolved.retryBudget,
    giveUp: resolved.giveUp,
  })

  const stopListening = channel.listen((message) => {
    election.onMessage(message)
    host.onMessage(message)
    followers.onMessage(message)
    if (message.to !== undefined && message.to !== tabId) return
    if (message.type === TAB_MESSAGE.event) {
      for (const listener of remoteListeners.get(message.event) ?? []) {
        try {
          listener(message.detail)
        } catch (error) {
          report(error)
        }
      }
    } else if (message.type === TAB_MESSAGE.statsReply) {
      statsWaiters.get(message.id)?.(message.stats)
    }
  })

  function submit<T>(job: Job<T>, sink: Settlement<T>): void {
    if (closed) {
      sink.reject(new ClosedError('polite-fetch: the limiter is closed', { request: job.label }))
      return
    }
    if (job === null || typeof job !== 'object' || typeof job.scope !== 'string') {
      local.submit(job, sink) // the limiter's own validation and error
      return
    }
    if (job.signal?.aborted) {
      sink.reject(job.signal.reason)
      return
    }
    election.join(job.scope)
    if (election.leaderOf(job.scope) === tabId) local.submit(job, sink)
    else followers.submit(job, sink)
  }

  const close = async (): Promise<void> => {
    if (closed) return
    if (!away) leaveGroup()
    closed = true
    followers.closeAll()
    for (const resolve of statsWaiters.values()) resolve(undefined)
    stopListening()
    stopFollowingPage()
    await local.close()
    channel.close()
  }
  // A closing tab says so: its followers resubmit to the next leader at once, its leader drops its calls.
  const stopFollowingPage = followPageLifecycle(pageEvents, {
    close: () => void close(),
    suspend() {
      if (closed || away) return
      away = true
      leaveGroup()
      followers.leaderLeft() // every leader dropped this tab's calls on its bye
    },
    resume() {
      if (closed || !away) return
      away = false
      joinGroup()
      for (const scope of followers.scopes()) election.join(scope)
    },
  })

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
        const id = ++statsSeq
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
