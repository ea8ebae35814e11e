// @vitest-environment happy-dom
// A call's retry budget and deadline are the call's, not a leader's: a leader that leaves after
// deciding a retry (the retry waiting in its lane, unsent) must not hand the next leader a call
// with a fresh budget, or one call makes more than retryBudget + 1 attempts across handovers.
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create-client.js'
import { DeadlineError, RetryBudgetError } from '../../src/client/errors.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, held, leadWith, newGroup, ok, openTab, type Tab, type Upstream } from './harness.js'

afterEach(closeTabs)

/** Every attempt a 429; attempt n (from 1) asks to wait `retryAfterS[n - 1]` seconds, then 0. */
function throttledWith(retryAfterS: number[]): Upstream {
  let n = 0
  return async () => new Response('slow down', { status: 429, headers: { 'retry-after': String(retryAfterS[n++] ?? 0) } })
}

/** `tab` has decided to retry a follower's call: the retry waits in its lane, not yet granted. */
async function retryWaitsIn(tab: Tab, retries: number) {
  await expect.poll(() => tab.limiter.stats()[0]).toMatchObject({ retries, queued: 1, inFlight: 0 })
}

describe("a follower's call across handovers", () => {
  it('keeps its retry budget when the leader leaves with a retry decided: retryBudget 2 over two handovers makes 3 attempts', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const first = openTab(group, locks, ok)
    await leadWith(first)
    // Next in line for the lock, in this order, before the follower joins.
    const second = openTab(group, locks, ok)
    expect((await second.client.fetch(`${API}/s`)).status).toBe(200)
    const third = openTab(group, locks, ok)
    expect((await third.client.fetch(`${API}/t`)).status).toBe(200)
    const follower = openTab(group, locks, throttledWith([30, 30]), { retryBudget: 2 })
    const call = follower.client.fetch(`${API}/f`).catch((error: unknown) => error)
    await retryWaitsIn(first, 1)
    await first.limiter.close()
    await retryWaitsIn(second, 1) // attempt 2 went through the second leader, which retries it too
    await second.limiter.close()
    const error = (await call) as RetryBudgetError
    expect(error).toBeInstanceOf(RetryBudgetError)
    expect(follower.sent).toHaveLength(3)
    // Told over the whole call, not the last lane's share of it.
    expect(error.attempts).toBe(3)
    expect(error.message).toMatch(/retry budget of 2 used up after 3 attempts$/)
  })

  it('keeps its retry budget when a retry is decided in the follower (its attempt was out at the handover): retryBudget 2 makes 3 attempts', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const first = openTab(group, locks, ok)
    await leadWith(first)
    const second = openTab(group, locks, ok)
    expect((await second.client.fetch(`${API}/s`)).status).toBe(200)
    const third = openTab(group, locks, ok)
    expect((await third.client.fetch(`${API}/t`)).status).toBe(200)
    // Attempt 1 is retried in the first leader's lane; attempt 2 is held until the second leader has gone.
    const blocker = held()
    const throttled = throttledWith([30])
    let n = 0
    const follower = openTab(group, locks, (input, init) => (++n === 2 ? blocker.upstream(input, init) : throttled(input, init)), { retryBudget: 2 })
    const call = follower.client.fetch(`${API}/f`).catch((error: unknown) => error)
    await retryWaitsIn(first, 1)
    await first.limiter.close()
    await expect.poll(() => follower.sent.length).toBe(2)
    await second.limiter.close()
    await expect.poll(() => follower.limiter.info().leaders[API]).toBe(third.limiter.tabId)
    blocker.releases[0]!(new Response('slow down', { status: 429, headers: { 'retry-after': '0' } }))
    expect(await call).toBeInstanceOf(RetryBudgetError)
    expect(follower.sent).toHaveLength(3)
  })

  it('keeps its retry budget when the follower itself becomes the leader: retryBudget 1 makes 2 attempts', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok)
    await leadWith(leader)
    const follower = openTab(group, locks, throttledWith([30]), { retryBudget: 1 })
    const call = follower.client.fetch(`${API}/f`).catch((error: unknown) => error)
    await retryWaitsIn(leader, 1)
    await leader.limiter.close()
    expect(await call).toBeInstanceOf(RetryBudgetError)
    expect(follower.sent).toHaveLength(2)
    expect(follower.limiter.info().leaders[API]).toBe(follower.limiter.tabId)
  })

  it('keeps its deadline: the next leader ends the call at the deadline set when the call began', async () => {
    const clock = new ManualClock(Date.now())
    const group = newGroup()
    const locks = fakeLocks()
    const first = openTab(group, locks, ok, { clock })
    await leadWith(first)
    const second = openTab(group, locks, ok, { clock })
    expect((await second.client.fetch(`${API}/s`)).status).toBe(200)
    // Each 429 asks for 8 s; the deadline is 10 s after the call began. The client reads
    // Retry-After by the same manual clock as the limiters.
    const follower = openTab(group, locks, ok, { clock, deadlineMs: 10_000 })
    const upstream = throttledWith([8, 8])
    let sends = 0
    const client = createClient({ limiter: follower.limiter, clock, fetch: (input, init) => (sends++, upstream(input, init)) })
    let ended: unknown
    void client.fetch(`${API}/f`).then(
      (response) => (ended = response),
      (error: unknown) => (ended = error),
    )
    await retryWaitsIn(first, 1)
    await clock.advance(7_000)
    await first.limiter.close()
    // 7 s in, the second 429's 8 s end after the deadline; a restarted one would retry (the manual clock stands still).
    await expect.poll(() => ended).toBeInstanceOf(DeadlineError)
    expect(sends).toBe(2)
    expect(second.limiter.stats()[0]).toMatchObject({ queued: 0, inFlight: 0 })
  })
})
