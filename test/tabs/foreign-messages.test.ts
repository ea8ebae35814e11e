// @vitest-environment happy-dom
// What else may be on the group's channel: another library, another version, garbage, and
// replays of this protocol's own messages. None of it may break a call, throw, or take a
// slot of the leader's lane for ever.
import { afterEach, describe, expect, it } from 'vitest'
import { tabChannelName, TAB_PROTOCOL_VERSION } from '../../src/protocol/tab-messages.js'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, leadWith, newGroup, ok, openTab } from './harness.js'

const raw: BroadcastChannel[] = []
afterEach(async () => {
  for (const channel of raw.splice(0)) channel.close()
  await closeTabs()
})

function rawChannel(group: string): BroadcastChannel {
  const channel = new BroadcastChannel(tabChannelName(group))
  raw.push(channel)
  return channel
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('foreign and replayed messages on the tab channel', () => {
  it("a replayed call of a follower's settled call is granted, then cancelled by the follower: the leader's slot comes back", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok, { maxInFlight: 1 })
    await leadWith(leader)
    const follower = openTab(group, locks, ok)
    const spy = rawChannel(group)
    const seen: unknown[] = []
    spy.onmessage = (event) => seen.push(event.data)
    expect((await follower.client.fetch(`${API}/once`)).status).toBe(200)
    await settle()
    const call = seen.find((m) => (m as { type?: string }).type === 'polite-fetch:tab:call')
    expect(call).toBeDefined()
    spy.postMessage(call) // the same call again, as from the follower
    await expect.poll(() => leader.limiter.stats()[0]?.attempts).toBe(3) // warm, once, and the replay's grant
    await expect.poll(() => leader.limiter.stats()[0]?.inFlight).toBe(0)
    expect(follower.sent).toHaveLength(1) // the replay sent nothing
    expect((await leader.client.fetch(`${API}/after`)).status).toBe(200)
  })

  it('ignores garbage, other versions and malformed fields, and keeps serving', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const errors: unknown[] = []
    const leader = openTab(group, locks, ok, { onError: (error) => errors.push(error) })
    await leadWith(leader)
    const follower = openTab(group, locks, ok, { onError: (error) => errors.push(error) })
    const leaderId = leader.limiter.tabId
    const followerId = follower.limiter.tabId
    const v = TAB_PROTOCOL_VERSION
    const huge = 'x'.repeat(1_000_000)
    const junk: unknown[] = [
      null,
      42,
      'polite-fetch:tab:hello',
      [1, 2, 3],
      { v: 2, type: 'polite-fetch:tab:hello', from: 'future', scope: API },
      { v, type: 'polite-fetch:tab:hello', scope: API },
      { v, type: 'polite-fetch:tab:nope', from: 'x' },
      { v, type: 'polite-fetch:tab:grant', from: leaderId, to: followerId, id: -1, attempt: 1 },
      { v, type: 'polite-fetch:tab:grant', from: leaderId, to: followerId, id: 1.5, attempt: 1 },
      { v, type: 'polite-fetch:tab:settle', from: leaderId, to: followerId, id: 99, attempt: 0 },
      { v, type: 'polite-fetch:tab:call', from: 'ghost', to: leaderId, id: 1, call: { scope: API, cost: Number.NaN } },
      { v, type: 'polite-fetch:tab:call', from: 'ghost', to: leaderId, id: 1, call: 'call' },
      // Well formed, from a tab that does not exist (or died right after posting): no lock of its own.
      { v, type: 'polite-fetch:tab:call', from: 'ghost', to: leaderId, id: 2, call: { scope: API, cost: 1, deadlineAt: Date.now() + 60_000, retryBudget: 3, retryErrors: false, attemptsDone: 0 } },
      { v, type: 'polite-fetch:tab:outcome', from: followerId, to: leaderId, id: 1, attempt: 1, signal: { kind: 'teapot', status: 418 } },
      { v, type: 'polite-fetch:tab:reject', from: leaderId, to: followerId, id: 1, error: { name: huge, message: 7 } },
      { v, type: 'polite-fetch:tab:subscribe', from: 'ghost', events: ['__proto__', 'toString', huge] },
      { v, type: 'polite-fetch:tab:subscribe', from: 'ghost', events: Array.from({ length: 100_000 }, (_, i) => `e${i}`) },
      { v, type: 'polite-fetch:tab:event', from: leaderId, event: 'attempt', detail: { huge } },
      { v, type: 'polite-fetch:tab:stats-reply', from: leaderId, to: followerId, id: 12345, scope: API, stats: huge },
      { v, type: 'polite-fetch:tab:bye', from: 'ghost', scope: 5 },
      { v, type: 'polite-fetch:tab:who', from: 'ghost', scope: { toString: 'no' } },
      { v, type: 'polite-fetch:tab:stats', from: 'ghost', scope: API, id: 1, __proto__: { polluted: true } },
    ]
    const channel = rawChannel(group)
    for (const message of junk) channel.postMessage(message)
    const calls = Array.from({ length: 10 }, (_, i) => follower.client.fetch(`${API}/f${i}`))
    for (const message of junk) channel.postMessage(message)
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(Array(10).fill(200))
    expect(follower.limiter.info().leaders[API]).toBe(leaderId)
    expect(leader.limiter.stats()[0]).toMatchObject({ inFlight: 0, queued: 0 })
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
    // Unknown event names in a subscribe are dropped unread, not one error each.
    expect(errors.length).toBeLessThanOrEqual(3)
  })
})
