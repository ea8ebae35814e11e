// @vitest-environment happy-dom
// The channel orders the messages of one sender, not those of two: a follower may hear the
// new leader's hello before the old leader's bye (the old one releases its lock on another
// wire than the channel). It must still end up following the new leader.
import { afterEach, describe, expect, it } from 'vitest'
import { readTabMessage, tabChannelName } from '../../src/protocol/tab-messages.js'
import { tabChannelOver, type TabChannel } from '../../src/tabs/tab-channel.js'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, leadWith, newGroup, ok, openTab } from './harness.js'

afterEach(closeTabs)

/** The group's BroadcastChannel, delivering what `slow()` sends `delayMs` late (in order). */
function slowFrom(group: string, slow: () => string | undefined, delayMs: number): TabChannel {
  const channel = new BroadcastChannel(tabChannelName(group))
  return tabChannelOver(
    {
      receive(onData) {
        channel.onmessage = (event: MessageEvent) => {
          if (readTabMessage(event.data)?.from === slow()) setTimeout(() => onData(event.data), delayMs)
          else onData(event.data)
        }
        return () => (channel.onmessage = null)
      },
      send: (message) => channel.postMessage(message),
      close: () => channel.close(),
    },
    () => {},
  )
}

describe('a handover heard out of order', () => {
  it("the old leader's hello (its answer to who) and bye after the new leader's hello: the follower asks again, and its calls go to the new leader", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const first = openTab(group, locks, ok)
    await leadWith(first)
    const next = openTab(group, locks, ok)
    expect((await next.client.fetch(`${API}/n`)).status).toBe(200)
    const follower = openTab(group, locks, ok, { channel: slowFrom(group, () => first.limiter.tabId, 50) })
    const early = follower.client.fetch(`${API}/f0`) // joins: asks who leads, and the first leader answers
    await new Promise((resolve) => setTimeout(resolve, 10))
    await first.limiter.close()
    await expect.poll(() => next.limiter.info().leaders[API]).toBe(next.limiter.tabId)
    expect((await early).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 100)) // the first leader's hello and bye have come
    await expect.poll(() => follower.limiter.info().leaders[API]).toBe(next.limiter.tabId)
    const response = await follower.client.fetch(`${API}/f1`, { politeFetch: { deadlineMs: 2_000 } })
    expect(response.status).toBe(200)
  })
})
