// One leader per scope among the tabs of a sharing group. With Web Locks (every current
// browser) the leader is the tab holding the scope's lock: the browser grants it to one tab,
// queues the others, and hands it to the next in line when the holder closes or crashes, so
// there is never a second leader and no timer decides anything. Where locks are missing, a
// BroadcastChannel bully election stands in: bid, lowest tab id wins, the leader heartbeats
// and followers re-elect when it falls silent.
import { TAB_MESSAGE, tabChannelName, tabMessage, type TabMessage } from '../protocol/tab-messages.js'
import type { TabChannel } from './tab-channel.js'
import { lockPresence } from './tab-presence.js'

/** The part of `navigator.locks` the election uses. */
export interface LockManagerLike {
  request(name: string, options: { ifAvailable?: boolean; signal?: AbortSignal }, callback: (lock: unknown) => Promise<void> | void): Promise<unknown>
}

export interface ElectionEvents {
  /** This tab now leads `scope`. */
  lead(scope: string): void
  /** Another tab (`leader`) leads `scope`; undefined while the scope has no known leader. */
  follow(scope: string, leader: string | undefined): void
}

export interface Election {
  /** Take part in electing `scope`'s leader (idempotent). */
  join(scope: string): void
  /** The tab leading `scope` (this tab's id when it leads), if known. */
  leaderOf(scope: string): string | undefined
  /** Every scope this tab takes part in, with its leader. */
  leaders(): Record<string, string | undefined>
  onMessage(message: TabMessage): void
  /** Stop leading and following: release the locks, tell the followers. */
  close(): void
}

export interface ElectionOptions {
  tabId: string
  group: string
  channel: TabChannel
  events: ElectionEvents
  /** `navigator.locks`; undefined selects the BroadcastChannel fallback. */
  locks: LockManagerLike | undefined
  onError?: (error: unknown) => void
}

/**
 * Fallback timing, given (this path runs only where Web Locks are missing): a bid window long
 * enough for every tab's main thread to have handled the bids of a round even when busy, and
 * a heartbeat that only matters to notice a leader that vanished without saying bye (a crash).
 */
export const BID_WINDOW_MS = 100
export const HEARTBEAT_MS = 1_000
const SILENT_HEARTBEATS = 3

interface ScopeState {
  leader: string | undefined
  /** Locks: resolves the held lock's callback (releases it). */
  release?: () => void
  /** Locks: aborts the queued request. */
  abort?: AbortController
  /** Fallback: bidders seen in the current round, and its timer. */
  bidders?: Set<string>
  bidTimer?: ReturnType<typeof setTimeout>
  lastHelloAt: number
}

export function createElection(options: ElectionOptions): Election {
  const { tabId, channel, events, locks } = options
  const report = options.onError ?? (() => {})
  const scopes = new Map<string, ScopeState>()
  const lockPrefix = `${tabChannelName(options.group)}:lead:`
  let closed = false
  let heartbeat: ReturnType<typeof setInterval> | undefined

  const post = (payload: Parameters<typeof tabMessage>[0]) => channel.post(tabMessage(payload, tabId))

  // A followed leader's presence lock (tab-presence.ts): a hello can come late, after its tab
  // crashed (the channel orders one sender's messages, not two senders'), and a follower that
  // believed it would hand its calls to nobody until their deadlines. The browser grants the
  // lock once that tab is gone, and the follower then treats it as gone, as on its bye.
  const leaderPresence = lockPresence(locks, undefined, report)

  const setLeader = (scope: string, state: ScopeState, leader: string | undefined) => {
    if (state.leader === leader) return
    state.leader = leader
    if (leader === tabId) events.lead(scope)
    else events.follow(scope, leader)
    if (leader !== undefined && leader !== tabId) leaderPresence.watch(leader, () => leaderLeft(leader, undefined))
  }

  /** `leader` stopped leading `only` (every scope when undefined): find the next one. */
  const leaderLeft = (leader: string, only: string | undefined) => {
    if (closed) return
    for (const [scope, state] of scopes) {
      if (state.leader !== leader || (only !== undefined && only !== scope)) continue
      setLeader(scope, state, undefined)
      // With locks the browser passes the lock on and the new holder says hello; but the
      // channel orders one sender's messages, not two senders': the new holder's hello
      // may have come before this bye (after a late hello of the old leader), so ask.
      if (locks) post({ type: TAB_MESSAGE.who, scope })
      else bid(scope, state)
    }
  }

  // ---- Web Locks ----
  const hold = (scope: string, state: ScopeState): Promise<void> => {
    if (closed) return Promise.resolve()
    const held = new Promise<void>((resolve) => (state.release = resolve))
    setLeader(scope, state, tabId)
    post({ type: TAB_MESSAGE.hello, scope })
    return held
  }
  const joinWithLocks = (scope: string, state: ScopeState, manager: LockManagerLike) => {
    const name = lockPrefix + scope
    manager
      .request(name, { ifAvailable: true }, (lock) => {
        if (lock !== null) return hold(scope, state)
        // Someone leads: ask who, and queue to take over when it leaves.
        post({ type: TAB_MESSAGE.who, scope })
        const abort = new AbortController()
        state.abort = abort
        manager.request(name, { signal: abort.signal }, () => hold(scope, state)).catch((error: unknown) => {
          if (!abort.signal.aborted) report(error)
        })
        return undefined
      })
      .catch(report)
  }

  // ---- BroadcastChannel fallback ----
  const bid = (scope: string, state: ScopeState) => {
    if (closed || state.bidTimer !== undefined) return
    state.bidders = new Set([tabId])
    post({ type: TAB_MESSAGE.claim, scope })
    state.bidTimer = setTimeout(() => {
      state.bidTimer = undefined
      if (closed || state.leader !== undefined) return
      const winner = [...(state.bidders ?? [])].sort()[0]
      if (winner === tabId) {
        setLeader(scope, state, tabId)
        post({ type: TAB_MESSAGE.hello, scope })
      } else {
        // The winner announces itself; if it never does (it closed meanwhile), bid again.
        state.bidTimer = setTimeout(() => {
          state.bidTimer = undefined
          if (state.leader === undefined) bid(scope, state)
        }, BID_WINDOW_MS)
      }
    }, BID_WINDOW_MS)
  }
  const startHeartbeat = () => {
    heartbeat ??= setInterval(() => {
      const now = Date.now()
      for (const [scope, state] of scopes) {
        if (state.leader === tabId) post({ type: TAB_MESSAGE.hello, scope })
        else if (state.leader !== undefined && now - state.lastHelloAt > SILENT_HEARTBEATS * HEARTBEAT_MS) {
          setLeader(scope, state, undefined)
          bid(scope, state)
        }
      }
    }, HEARTBEAT_MS)
  }

  return {
    join(scope) {
      if (closed || scopes.has(scope)) return
      const state: ScopeState = { leader: undefined, lastHelloAt: Date.now() }
      scopes.set(scope, state)
      if (locks) {
        joinWithLocks(scope, state, locks)
        return
      }
      startHeartbeat()
      post({ type: TAB_MESSAGE.who, scope })
      bid(scope, state)
    },
    leaderOf: (scope) => scopes.get(scope)?.leader,
    leaders() {
      const out: Record<string, string | undefined> = {}
      for (const [scope, state] of scopes) out[scope] = state.leader
      return out
    },
    onMessage(message) {
      if (closed || message.from === tabId) return
      switch (message.type) {
        case TAB_MESSAGE.who: {
          if (scopes.get(message.scope)?.leader === tabId) post({ type: TAB_MESSAGE.hello, scope: message.scope })
          return
        }
        case TAB_MESSAGE.hello: {
          const state = scopes.get(message.scope)
          if (!state) return
          state.lastHelloAt = Date.now()
          if (state.leader === tabId) {
            // Fallback only (locks never grant two holders): the lower id keeps the lead.
            if (locks || message.from > tabId) {
              post({ type: TAB_MESSAGE.hello, scope: message.scope })
              return
            }
            post({ type: TAB_MESSAGE.bye, scope: message.scope })
          }
          if (state.bidTimer !== undefined) clearTimeout(state.bidTimer)
          state.bidTimer = undefined
          setLeader(message.scope, state, message.from)
          return
        }
        case TAB_MESSAGE.claim: {
          const state = scopes.get(message.scope)
          if (!state || locks) return
          if (state.leader === tabId) post({ type: TAB_MESSAGE.hello, scope: message.scope })
          else state.bidders?.add(message.from)
          return
        }
        case TAB_MESSAGE.bye: {
          leaderLeft(message.from, message.scope)
          return
        }
        default:
      }
    },
    close() {
      if (closed) return
      for (const [scope, state] of scopes) {
        if (state.leader === tabId) post({ type: TAB_MESSAGE.bye, scope })
        state.abort?.abort()
        state.release?.()
        if (state.bidTimer !== undefined) clearTimeout(state.bidTimer)
        // Nobody leads for this tab any more: a call it makes now waits for the next election.
        state.leader = undefined
      }
      closed = true
      leaderPresence.close()
      if (heartbeat !== undefined) clearInterval(heartbeat)
    },
  }
}

/** Every scope led by one fixed party (the service worker, for a page it does not control): no election. */
export function fixedLeader(leader: string): Election {
  const scopes = new Set<string>()
  return {
    join: (scope) => void scopes.add(scope),
    leaderOf: () => leader,
    leaders() {
      const out: Record<string, string | undefined> = {}
      for (const scope of scopes) out[scope] = leader
      return out
    },
    onMessage() {},
    close() {},
  }
}
