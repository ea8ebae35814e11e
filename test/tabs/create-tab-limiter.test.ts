// @vitest-environment happy-dom
// Several "tabs" in one process (harness.ts), talking over the real BroadcastChannel.
import { afterEach, describe, expect, it } from 'vitest'
import { DeadlineError, PoliteFetchError } from '../../src/client/errors.js'
import { fakeLocks } from './fake-locks.js'
import { answerInTurn, API, closeTabs, held, leadWith, newGroup, ok, openTab, type Upstream } from './harness.js'

afterEach(closeTabs)

describe('createTabLimiter with Web Locks', () => {
  it("hands the leader everything a follower's response said: x-should-retry: true makes a 500 retried", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok)
    await leadWith(leader)
    let answered = 0
    const follower = openTab(group, locks, async () =>
      ++answered === 1 ? new Response('busy', { status: 500, headers: { 'x-should-retry': 'true' } }) : new Response('ok', { status: 200 }),
    )
    const res = await follower.client.fetch(`${API}/flaky`)
    expect(res.status).toBe(200)
    expect(follower.sent.map((s) => s.url)).toEqual([`${API}/flaky`, `${API}/flaky`])
    expect(leader.sent.map((s) => s.url)).toEqual([`${API}/warm`])
  })

  it("runs a follower's calls in the leader's lane; the follower sends them and settles with its own Response", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok)
    await leadWith(leader)
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('data: one\n\n'))
          controller.enqueue(new TextEncoder().encode('data: two\n\n'))
          controller.close()
        },
      })
    const follower = openTab(group, locks, async (_input, init) =>
      init?.method === 'POST'
        ? new Response('created', { status: 201, headers: { 'x-from': 'server' } })
        : new Response(stream(), { headers: { 'content-type': 'text/event-stream' } }),
    )
    const posted = await follower.client.fetch(`${API}/items`, { method: 'POST', body: '{"a":1}' })
    expect(posted.status).toBe(201)
    expect(posted.headers.get('x-from')).toBe('server')
    expect(await posted.text()).toBe('created')
    const events = await follower.client.fetch(`${API}/events`)
    expect(await events.text()).toBe('data: one\n\ndata: two\n\n')
    expect(follower.sent).toEqual([
      { url: `${API}/items`, body: '{"a":1}' },
      { url: `${API}/events`, body: undefined },
    ])
    expect(leader.sent).toHaveLength(1) // its own warm-up only
    expect(leader.limiter.stats()).toEqual([expect.objectContaining({ scope: API, attempts: 3, successes: 3 })])
    expect(follower.limiter.stats()).toEqual([])
    expect(follower.limiter.info()).toEqual({ shared: true, tabId: follower.limiter.tabId, leaders: { [API]: leader.limiter.tabId } })
    expect(await follower.limiter.sharedStats(500)).toEqual([expect.objectContaining({ scope: API, attempts: 3 })])
  })

  it("paces every tab's calls through the leader's lane", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    let inFlight = 0
    let most = 0
    const slow: Upstream = async () => {
      most = Math.max(most, ++inFlight)
      await new Promise((resolve) => setTimeout(resolve, 5))
      inFlight--
      return new Response('ok')
    }
    const a = openTab(group, locks, slow, { maxInFlight: 1 })
    await leadWith(a)
    const b = openTab(group, locks, slow, { maxInFlight: 1 })
    const c = openTab(group, locks, slow, { maxInFlight: 1 })
    const calls = [a, b, c].flatMap((t) => [1, 2, 3].map((i) => t.client.fetch(`${API}/x${i}`)))
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(Array(9).fill(200))
    expect(most).toBe(1)
    expect(a.limiter.stats()[0]).toMatchObject({ attempts: 10, successes: 10 })
  })

  it("retries a follower's 429 in the leader's lane and settles with the final response", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok)
    await leadWith(leader)
    let n = 0
    const follower = openTab(group, locks, async () => (++n === 1 ? new Response('slow down', { status: 429 }) : new Response('fine')))
    const response = await follower.client.fetch(`${API}/a`)
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('fine')
    expect(follower.sent).toHaveLength(2)
    expect(leader.limiter.stats()[0]).toMatchObject({ throttled: 1, retries: 1, successes: 2 })
  })

  it("rejects a follower's failed POST with its own transport error, and retries a failed GET in the leader's lane", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok, { errorBackoffBaseMs: 1 })
    await leadWith(leader)
    const failure = new TypeError('Failed to fetch')
    let gets = 0
    const follower = openTab(group, locks, async (_input, init) => {
      if (init?.method === 'POST') throw failure
      if (++gets === 1) throw new TypeError('Failed to fetch')
      return new Response('second time')
    })
    await expect(follower.client.fetch(`${API}/p`, { method: 'POST', body: 'x' })).rejects.toBe(failure)
    expect(await (await follower.client.fetch(`${API}/g`)).text()).toBe('second time')
    expect(leader.limiter.stats()[0]).toMatchObject({ errors: 2, retries: 1 })
  })

  it("aborts a follower's attempt when the leader's per-attempt timeout fires", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok, { timeoutMs: 30, retryBudget: 0 })
    await leadWith(leader)
    const blocker = held()
    const follower = openTab(group, locks, blocker.upstream)
    const call = follower.client.fetch(`${API}/slow`, { method: 'POST', body: 'x' })
    await expect(call).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(follower.sent).toHaveLength(1)
  })

  it("cancels a follower's queued call in the leader when the follower aborts", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const blocker = held()
    const leader = openTab(group, locks, blocker.upstream, { maxInFlight: 1 })
    const first = leader.client.fetch(`${API}/block`) // holds the lane's one slot
    await expect.poll(() => leader.limiter.info().leaders[API]).toBe(leader.limiter.tabId)
    const giveUps: unknown[] = []
    leader.limiter.on('give-up', (detail) => giveUps.push(detail))
    const follower = openTab(group, locks, ok)
    const controller = new AbortController()
    const call = follower.client.fetch(`${API}/queued`, { signal: controller.signal })
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(1)
    controller.abort()
    await expect(call).rejects.toMatchObject({ name: 'AbortError' })
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(0)
    expect(giveUps).toEqual([expect.objectContaining({ reason: 'aborted' })])
    expect(follower.sent).toEqual([])
    blocker.releases[0]!(new Response('ok'))
    expect((await first).status).toBe(200)
  })

  it("rejects a follower's call past its deadline with the same typed error as in-page", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const blocker = held()
    const leader = openTab(group, locks, blocker.upstream, { maxInFlight: 1 })
    const first = leader.client.fetch(`${API}/block`)
    await expect.poll(() => leader.limiter.info().leaders[API]).toBe(leader.limiter.tabId)
    const follower = openTab(group, locks, ok)
    const remote = follower.client.fetch(`${API}/late`, { politeFetch: { deadlineMs: 30 } }).catch((e: unknown) => e)
    const own = leader.client.fetch(`${API}/late`, { politeFetch: { deadlineMs: 30 } }).catch((e: unknown) => e)
    const [remoteError, ownError] = await Promise.all([remote, own])
    expect(remoteError).toBeInstanceOf(DeadlineError)
    expect(ownError).toBeInstanceOf(DeadlineError)
    expect(PoliteFetchError.is(remoteError)).toBe(true)
    expect((remoteError as DeadlineError).request).toBe((ownError as DeadlineError).request)
    expect(follower.sent).toEqual([])
    blocker.releases[0]!(new Response('ok'))
    await first
  })

  it('hands over when the leader closes: queued calls move to the next leader, the one in flight settles in its tab, none is sent twice', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const blocker = held()
    const leader = openTab(group, locks, ok, { maxInFlight: 1 })
    await leadWith(leader)
    const follower = openTab(group, locks, blocker.upstream, { maxInFlight: 1 })
    const calls = [1, 2, 3].map((i) => follower.client.fetch(`${API}/f${i}`))
    await expect.poll(() => follower.sent.length).toBe(1) // f1 in flight, f2 and f3 queued in the leader
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(2)
    await leader.limiter.close()
    await expect.poll(() => follower.limiter.info().leaders[API]).toBe(follower.limiter.tabId)
    await answerInTurn(blocker, ['one', 'two', 'three'])
    expect(await Promise.all(calls.map(async (c) => (await c).text()))).toEqual(['one', 'two', 'three'])
    expect(follower.sent.map((s) => s.url)).toEqual([`${API}/f1`, `${API}/f2`, `${API}/f3`])
    expect(follower.limiter.stats()[0]).toMatchObject({ attempts: 2 }) // f2 and f3 in its own lane now
  })

  it('retries in the next leader a 429 that came back after its leader closed', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const blocker = held()
    const leader = openTab(group, locks, ok)
    await leadWith(leader)
    const follower = openTab(group, locks, blocker.upstream)
    const call = follower.client.fetch(`${API}/r`)
    await expect.poll(() => follower.sent.length).toBe(1)
    await leader.limiter.close()
    await expect.poll(() => follower.limiter.info().leaders[API]).toBe(follower.limiter.tabId)
    blocker.releases[0]!(new Response('busy', { status: 429 }))
    await expect.poll(() => blocker.releases.length).toBe(2)
    blocker.releases[1]!(new Response('done'))
    expect(await (await call).text()).toBe('done')
    expect(follower.sent).toHaveLength(2)
  })

  it('rejects its own waiting calls with ClosedError when it closes', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const blocker = held()
    const leader = openTab(group, locks, blocker.upstream, { maxInFlight: 1 })
    void leader.client.fetch(`${API}/block`).catch(() => {})
    await expect.poll(() => leader.limiter.info().leaders[API]).toBe(leader.limiter.tabId)
    const follower = openTab(group, locks, ok)
    const call = follower.client.fetch(`${API}/x`)
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(1)
    await follower.limiter.close()
    await expect(call).rejects.toMatchObject({ name: 'ClosedError' })
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(0) // the leader dropped it
  })

  it('forwards the leader’s limiter events to a follower that listens', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openTab(group, locks, ok)
    await leadWith(leader)
    const follower = openTab(group, locks, async () => new Response('no', { status: 404 }))
    const attempts: unknown[] = []
    follower.limiter.on('attempt', (detail) => attempts.push(detail))
    await follower.client.fetch(`${API}/events`)
    await expect.poll(() => attempts.length).toBeGreaterThanOrEqual(1)
    expect(attempts[0]).toMatchObject({ scope: API, attempt: 1 })
  })
})

describe('createTabLimiter without Web Locks (BroadcastChannel election)', () => {
  it('elects one leader per scope, and the next one when it closes', async () => {
    const group = newGroup()
    const a = openTab(group, null, ok)
    const b = openTab(group, null, ok)
    const [ra, rb] = await Promise.all([a.client.fetch(`${API}/a`), b.client.fetch(`${API}/b`)])
    expect([ra.status, rb.status]).toEqual([200, 200])
    const leaderA = a.limiter.info().leaders[API]
    expect(leaderA).toBeDefined()
    expect(b.limiter.info().leaders[API]).toBe(leaderA)
    const [lead, other] = leaderA === a.limiter.tabId ? [a, b] : [b, a]
    expect(lead.limiter.stats()[0]).toMatchObject({ attempts: 2 })
    await lead.limiter.close()
    await expect.poll(() => other.limiter.info().leaders[API], { timeout: 2_000 }).toBe(other.limiter.tabId)
    expect((await other.client.fetch(`${API}/c`)).status).toBe(200)
  })
})

describe('createTabLimiter without a channel', () => {
  it('is a plain limiter that says it does not share', async () => {
    const tab = openTab(newGroup(), null, ok, { channel: null })
    expect((await tab.client.fetch(`${API}/a`)).status).toBe(200)
    expect(tab.limiter.info()).toEqual({ shared: false, tabId: tab.limiter.tabId, leaders: {} })
    expect(tab.limiter.stats()[0]).toMatchObject({ attempts: 1 })
  })
})
