// @vitest-environment happy-dom
// An attempt in flight when its leader goes comes back to a follower that decides alone
// whether it is final or retried in the next leader's lane: by the same rules as a lane
// (core/retry-policy.ts), so the server's x-should-retry is heard either way.
import { afterEach, describe, expect, it } from 'vitest'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, held, leadWith, newGroup, ok, openTab } from './harness.js'

afterEach(closeTabs)

async function answerAfterHandover(first: Response, then: Response = new Response('again')) {
  const group = newGroup()
  const locks = fakeLocks()
  const leader = openTab(group, locks, ok)
  await leadWith(leader)
  const blocker = held()
  const follower = openTab(group, locks, blocker.upstream, { errorBackoffBaseMs: 1 })
  const call = follower.client.fetch(`${API}/r`)
  await expect.poll(() => follower.sent.length).toBe(1)
  await leader.limiter.close()
  await expect.poll(() => follower.limiter.info().leaders[API]).toBe(follower.limiter.tabId)
  blocker.releases[0]!(first)
  const settled = Promise.race([call, expect.poll(() => blocker.releases.length).toBe(2).then(() => blocker.releases[1]!(then)).then(() => call)])
  const response = await settled
  return { status: response.status, sends: follower.sent.length }
}

describe('an answer that comes back after its leader left', () => {
  it('a 429 with x-should-retry: false is final, as in a lane', async () => {
    expect(await answerAfterHandover(new Response('no', { status: 429, headers: { 'x-should-retry': 'false' } }))).toEqual({ status: 429, sends: 1 })
  })

  it('a 500 with x-should-retry: true is retried, as in a lane', async () => {
    expect(await answerAfterHandover(new Response('busy', { status: 500, headers: { 'x-should-retry': 'true' } }))).toEqual({ status: 200, sends: 2 })
  })

  it('a 429 is retried and a 404 is final', async () => {
    expect(await answerAfterHandover(new Response('later', { status: 429 }))).toEqual({ status: 200, sends: 2 })
    expect(await answerAfterHandover(new Response('none', { status: 404 }))).toEqual({ status: 404, sends: 1 })
  })
})
