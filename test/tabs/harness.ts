// Several "tabs" in one process: each a createTabLimiter under its own createClient, talking
// over the real BroadcastChannel (or a TabChannel the test gives); Web Locks from
// fake-locks.ts (browsers only), or none. Each test file closes its tabs after each test.
import { expect } from 'vitest'
import { createClient, type Client } from '../../src/client/create-client.js'
import { none } from '../../src/core/pacers/index.js'
import { createTabLimiter, type TabLimiter, type TabLimiterOptions } from '../../src/tabs/create-tab-limiter.js'
import type { LockManagerLike } from '../../src/tabs/leader-election.js'
import { broadcastTabChannel } from '../../src/tabs/tab-channel.js'
import type { FakeLocks } from './fake-locks.js'

export const API = 'https://api.example'
export type Upstream = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>

export interface Tab {
  limiter: TabLimiter
  client: Client
  sent: { url: string; body: string | undefined }[]
}

export const openTabs: Tab[] = []

export async function closeTabs(): Promise<void> {
  await Promise.all(openTabs.splice(0).map((t) => t.limiter.close()))
}

let groupSeq = 0
export function newGroup(): string {
  return `tabs-test-${++groupSeq}-${Math.random().toString(36).slice(2)}`
}

export function openTab(group: string, locks: LockManagerLike | null, upstream: Upstream, options: TabLimiterOptions = {}): Tab {
  const sent: Tab['sent'] = []
  const limiter = createTabLimiter({ group, locks, strategy: none(), ...options })
  const fetch: Upstream = async (input, init) => {
    const body = init?.body === undefined || init.body === null ? undefined : await new Response(init.body).text()
    sent.push({ url: String(input), body })
    return upstream(input, init)
  }
  const tab = { limiter, client: createClient({ limiter, fetch }), sent }
  openTabs.push(tab)
  return tab
}

export const ok: Upstream = async () => new Response('ok', { status: 200 })

/** A response the test releases by hand; its attempt stays in flight until then (or its signal aborts). */
export function held() {
  const releases: ((response: Response) => void)[] = []
  const upstream: Upstream = (_input, init) =>
    new Promise<Response>((resolve, reject) => {
      releases.push(resolve)
      init?.signal?.addEventListener('abort', () => reject(init.signal?.reason))
    })
  return { upstream, releases }
}

/** Answers held requests in turn with `bodies`, each once it has been sent. */
export async function answerInTurn(blocker: ReturnType<typeof held>, bodies: string[]): Promise<void> {
  for (const [i, body] of bodies.entries()) {
    await expect.poll(() => blocker.releases.length).toBeGreaterThan(i)
    blocker.releases[i]!(new Response(body))
  }
}

export async function leadWith(tab: Tab): Promise<void> {
  expect((await tab.client.fetch(`${API}/warm`)).status).toBe(200)
  expect(tab.limiter.info().leaders[API]).toBe(tab.limiter.tabId)
}

/**
 * A tab that can die without a word (`crash`: its channel goes quiet and the browser releases
 * its locks) or stop answering while alive (`hang`: its channel goes quiet, its locks held).
 */
export function openCrashableTab(group: string, locks: FakeLocks, upstream: Upstream, options: TabLimiterOptions = {}): Tab & { crash(): void; hang(): void } {
  const own = locks.tab()
  const channel = broadcastTabChannel(group)
  const tab = openTab(group, own, upstream, { channel, ...options })
  return {
    ...tab,
    crash() {
      own.crash()
      channel?.close()
    },
    hang() {
      channel?.close()
    },
  }
}
