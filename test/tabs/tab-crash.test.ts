// @vitest-environment happy-dom
// A tab that dies without pagehide (a crash, a killed renderer, a discarded tab): no bye on
// the channel, only the browser releasing its locks. Every call of the tabs left must still
// settle, and the leader's lane must not keep a dead tab's calls or slots.
import { afterEach, describe, expect, it } from 'vitest'
import { TAB_MESSAGE, tabMessage, type TabMessage } from '../../src/protocol/tab-messages.js'
import { broadcastTabChannel, type TabChannel } from '../../src/tabs/tab-channel.js'
import { fakeLocks } from './fake-locks.js'
import { answerInTurn, API, closeTabs, held, leadWith, newGroup, ok, openCrashableTab, openTab } from './harness.js'

afterEach(closeTabs)

describe('a tab that crashes', () => {
  it('the leader, with calls of a follower queued and one in flight: another tab leads, every call settles, none is sent twice', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openCrashableTab(group, locks, ok, { maxInFlight: 1 })
    await leadWith(leader)
    const next = openTab(group, locks.tab(), ok, { maxInFlight: 1 }) // queues for the lock first
    expect((await next.client.fetch(`${API}/n`)).status).toBe(200)
    const blocker = held()
    const follower = openTab(group, locks.tab(), blocker.upstream)
    const calls = [1, 2, 3].map((i) => follower.client.fetch(`${API}/f${i}`))
    await expect.poll(() => follower.sent.length).toBe(1)
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(2)
    leader.crash()
    await expect.poll(() => follower.limiter.info().leaders[API]).toBe(next.limiter.tabId)
    await answerInTurn(blocker, ['one', 'two', 'three'])
    expect(await Promise.all(calls.map(async (c) => (await c).text()))).toEqual(['one', 'two', 'three'])
    expect(follower.sent.map((s) => s.url)).toEqual([`${API}/f1`, `${API}/f2`, `${API}/f3`])
    expect(next.limiter.stats()[0]).toMatchObject({ attempts: 2, successes: 2, inFlight: 0 }) // f2 and f3
  })

  it("a follower, with its attempt in flight and calls queued: the leader drops them and frees the lane's slot", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks.tab(), ok, { maxInFlight: 1 })
    await leadWith(leader)
    const blocker = held()
    const follower = openCrashableTab(group, locks, blocker.upstream)
    for (const i of [1, 2, 3]) void follower.client.fetch(`${API}/f${i}`).catch(() => {})
    await expect.poll(() => follower.sent.length).toBe(1)
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(2)
    follower.crash()
    await expect.poll(() => leader.limiter.stats()[0]).toMatchObject({ inFlight: 0, queued: 0 })
    expect((await leader.client.fetch(`${API}/after`)).status).toBe(200)
  })
})

describe('a hello from a tab that is gone', () => {
  it('a follower that heard it last (a late hello of a crashed leader) asks who leads once the browser grants that tab\'s presence lock, and its call goes', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks.tab(), ok)
    await leadWith(leader)
    // The follower's own wire, to deliver one message to it alone: the leader never hears the
    // ghost's hello, so it cannot answer with its own (which would mend the follower anyway).
    const wire = broadcastTabChannel(group)!
    let deliver: ((message: TabMessage) => void) | undefined
    const channel: TabChannel = {
      post: (message) => wire.post(message),
      listen(handler) {
        deliver = handler
        const stop = wire.listen(handler)
        return () => {
          deliver = undefined
          stop()
        }
      },
      close: () => wire.close(),
    }
    const follower = openTab(group, locks.tab(), ok, { channel })
    expect((await follower.client.fetch(`${API}/before`)).status).toBe(200)
    deliver!(tabMessage({ type: TAB_MESSAGE.hello, scope: API }, 'crashed-leader'))
    const call = follower.client.fetch(`${API}/after`, { politeFetch: { deadlineMs: 5_000 } })
    expect((await call).status).toBe(200)
    expect(follower.limiter.info().leaders[API]).toBe(leader.limiter.tabId)
  }, 10_000)
})

describe('a leader that crashes where Web Locks are missing (BroadcastChannel election)', () => {
  it('falls silent: after three silent heartbeats the follower elects a leader, and its waiting call is sent', async () => {
    const group = newGroup()
    const channel = broadcastTabChannel(group)
    const leader = openTab(group, null, ok, { channel, tabId: 'a-lower-id-wins' })
    await leadWith(leader)
    const follower = openTab(group, null, ok, { tabId: 'b-follower' })
    expect((await follower.client.fetch(`${API}/before`)).status).toBe(200)
    expect(follower.limiter.info().leaders[API]).toBe('a-lower-id-wins')
    channel?.close() // the leader's page dies: no bye, no more hello
    const call = follower.client.fetch(`${API}/after`, { politeFetch: { deadlineMs: 10_000 } })
    expect((await call).status).toBe(200)
    expect(follower.limiter.info().leaders[API]).toBe('b-follower')
  }, 15_000)
})
