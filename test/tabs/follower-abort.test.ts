// @vitest-environment happy-dom
// A follower's call that ends while its attempt is out: the leader's lane must hear that the
// attempt ended, or it counts it in flight for ever (with maxInFlight 1, the lane stops).
import { afterEach, describe, expect, it } from 'vitest'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, held, leadWith, newGroup, ok, openTab } from './harness.js'

afterEach(closeTabs)

describe("a follower's call that ends with its attempt in flight", () => {
  it('aborted by its caller: the follower gets AbortError, the leader frees the slot', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok, { maxInFlight: 1 })
    await leadWith(leader)
    const blocker = held()
    const follower = openTab(group, locks, blocker.upstream)
    const controller = new AbortController()
    const call = follower.client.fetch(`${API}/slow`, { signal: controller.signal })
    await expect.poll(() => follower.sent.length).toBe(1)
    expect(leader.limiter.stats()[0]).toMatchObject({ inFlight: 1 })
    controller.abort()
    await expect(call).rejects.toMatchObject({ name: 'AbortError' })
    await expect.poll(() => leader.limiter.stats()[0]?.inFlight).toBe(0)
    expect((await leader.client.fetch(`${API}/after`)).status).toBe(200)
  })

  it('aborted after the grant left the leader, before it arrived: the slot is freed', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok, { maxInFlight: 1 })
    await leadWith(leader)
    const follower = openTab(group, locks, ok)
    const controller = new AbortController()
    // The leader's attempt event comes as it posts the grant: abort before the follower hears it.
    leader.limiter.on('attempt', (detail) => {
      if (detail.label?.endsWith('/x')) controller.abort()
    })
    const call = follower.client.fetch(`${API}/x`, { signal: controller.signal })
    await expect(call).rejects.toMatchObject({ name: 'AbortError' })
    expect(follower.sent).toEqual([])
    await expect.poll(() => leader.limiter.stats()[0]?.inFlight).toBe(0)
    expect((await leader.client.fetch(`${API}/after`)).status).toBe(200)
  })

  it("past its deadline in the leader's lane: DeadlineError, and the slot is freed when the attempt comes back", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    // The leader's clock runs 200 ms ahead, so its lane ends the call before the follower's own deadline timer.
    const ahead = { now: () => Date.now() + 200, sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) }
    const leader = openTab(group, locks, ok, { maxInFlight: 1, clock: ahead })
    await leadWith(leader)
    const blocker = held()
    const follower = openTab(group, locks, blocker.upstream)
    const call = follower.client.fetch(`${API}/slow`, { politeFetch: { deadlineMs: 300 } })
    await expect(call).rejects.toMatchObject({ name: 'DeadlineError' })
    await new Promise((resolve) => setTimeout(resolve, 300)) // past the follower's own deadline too
    expect(leader.limiter.stats()[0]).toMatchObject({ inFlight: 1 }) // abandoned, not cancelled: still out
    blocker.releases[0]!(new Response('late'))
    await expect.poll(() => leader.limiter.stats()[0]?.inFlight).toBe(0)
    expect((await leader.client.fetch(`${API}/after`)).status).toBe(200)
  })
})
