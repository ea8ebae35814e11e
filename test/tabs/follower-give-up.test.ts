// @vitest-environment happy-dom
// `giveUp: 'response'` in a follower tab: the leader's lane decides the give-up (retry budget,
// deadline, a too-long Retry-After), but only the follower holds the server's responses, so
// the follower answers with the last 429, marked, as the tab's own lane would; an SDK handed
// `client.fetch` then raises its own rate-limit error instead of a connection error.
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create-client.js'
import { RetryBudgetError } from '../../src/client/errors.js'
import { GIVE_UP_HEADER, SHOULD_RETRY_HEADER } from '../../src/client/give-up-header.js'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, leadWith, newGroup, ok, openTab, type Upstream } from './harness.js'

afterEach(closeTabs)

const throttled = (retryAfter: string): Upstream => async () =>
  new Response('{"error":"rate_limited"}', { status: 429, headers: { 'retry-after': retryAfter, 'x-vendor': 'kept' } })

async function leaderAndFollower(upstream: Upstream, options: Parameters<typeof openTab>[3]) {
  const group = newGroup()
  const locks = fakeLocks()
  const leader = openTab(group, locks, ok)
  await leadWith(leader)
  const follower = openTab(group, locks, upstream, options)
  return { leader, follower }
}

describe("a follower's give-up with giveUp: 'response'", () => {
  it('after the retry budget: the last 429, marked, headers intact', async () => {
    const { follower } = await leaderAndFollower(throttled('0'), { giveUp: 'response', retryBudget: 1 })
    const response = await follower.client.fetch(`${API}/items`)
    expect(response.status).toBe(429)
    expect(response.headers.get(GIVE_UP_HEADER)).toMatch(/^retry-budget/)
    expect(response.headers.get(SHOULD_RETRY_HEADER)).toBe('false')
    expect(response.headers.get('x-vendor')).toBe('kept')
    expect(follower.sent).toHaveLength(2)
    expect(follower.limiter.info().leaders[API]).not.toBe(follower.limiter.tabId) // decided in the leader's lane
  })

  it('at a Retry-After past the deadline: the 429 that named it, marked, one attempt sent', async () => {
    const { follower } = await leaderAndFollower(throttled('120'), { giveUp: 'response', deadlineMs: 1_000 })
    const response = await follower.client.fetch(`${API}/items`)
    expect(response.status).toBe(429)
    expect(response.headers.get(GIVE_UP_HEADER)).toMatch(/^(deadline|retry-after-too-long); retry-at="/)
    expect(response.headers.get('retry-after')).toBe('120')
    expect(follower.sent).toHaveLength(1)
  })

  it("a client's own giveUp over a tab limiter that throws", async () => {
    const { follower } = await leaderAndFollower(throttled('0'), { retryBudget: 0 })
    const client = createClient({ limiter: follower.limiter, fetch: throttled('0'), giveUp: 'response' })
    const response = await client.fetch(`${API}/items`)
    expect(response.status).toBe(429)
    expect(response.headers.get(GIVE_UP_HEADER)).toMatch(/^retry-budget/)
    await expect(follower.client.fetch(`${API}/items`)).rejects.toBeInstanceOf(RetryBudgetError)
  })

  it("without it (the default 'throw'): the typed error, as before", async () => {
    const { follower } = await leaderAndFollower(throttled('0'), { retryBudget: 1 })
    await expect(follower.client.fetch(`${API}/items`)).rejects.toBeInstanceOf(RetryBudgetError)
    expect(follower.sent).toHaveLength(2)
  })
})
