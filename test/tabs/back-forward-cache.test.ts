// @vitest-environment happy-dom
// A page the back/forward cache keeps (pagehide with persisted) comes back (pageshow with
// persisted) with its limiter as it was. While away it must not hold the others up; back,
// its calls must work. Closing the limiter on that pagehide rejected every later call of the
// page with ClosedError (seen in Chromium with the cache on: the demo page after Back).
import { afterEach, describe, expect, it } from 'vitest'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, held, leadWith, newGroup, ok, openTab } from './harness.js'

afterEach(closeTabs)

/** One page's lifecycle events, so each "tab" of the process goes away on its own. */
function page() {
  const target = new EventTarget()
  const fire = (type: 'pagehide' | 'pageshow', persisted: boolean) => target.dispatchEvent(Object.assign(new Event(type), { persisted }))
  return { pageEvents: target, away: () => fire('pagehide', true), back: () => fire('pageshow', true), gone: () => fire('pagehide', false) }
}

describe('a page kept in the back/forward cache', () => {
  it('the leader: another tab leads while it is away; back, its calls run in that lane', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leaderPage = page()
    const leader = openTab(group, locks.tab(), ok, { pageEvents: leaderPage.pageEvents })
    await leadWith(leader)
    const follower = openTab(group, locks.tab(), ok, { pageEvents: page().pageEvents })
    expect((await follower.client.fetch(`${API}/before`)).status).toBe(200)
    leaderPage.away()
    await expect.poll(() => follower.limiter.info().leaders[API]).toBe(follower.limiter.tabId)
    expect((await follower.client.fetch(`${API}/meanwhile`)).status).toBe(200)
    leaderPage.back()
    expect((await leader.client.fetch(`${API}/back`)).status).toBe(200)
    expect(leader.limiter.info().leaders[API]).toBe(follower.limiter.tabId)
    expect(follower.limiter.stats()[0]).toMatchObject({ successes: 2 }) // meanwhile, and back
  })

  it('a follower with a call queued at the leader: the leader drops it while it is away; back, it is sent', async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const blocker = held()
    const leader = openTab(group, locks.tab(), blocker.upstream, { maxInFlight: 1, pageEvents: page().pageEvents })
    const first = leader.client.fetch(`${API}/block`)
    await expect.poll(() => leader.limiter.info().leaders[API]).toBe(leader.limiter.tabId)
    const followerPage = page()
    const follower = openTab(group, locks.tab(), ok, { pageEvents: followerPage.pageEvents })
    const call = follower.client.fetch(`${API}/queued`)
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(1)
    followerPage.away()
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(0)
    followerPage.back()
    await expect.poll(() => leader.limiter.stats()[0]?.queued).toBe(1)
    blocker.releases[0]!(new Response('ok'))
    expect((await first).status).toBe(200)
    expect((await call).status).toBe(200)
    expect(follower.sent.map((s) => s.url)).toEqual([`${API}/queued`])
  })

  it('a page that goes for good closes: its calls reject with ClosedError', async () => {
    const group = newGroup()
    const gone = page()
    const tab = openTab(group, fakeLocks(), ok, { pageEvents: gone.pageEvents })
    await leadWith(tab)
    gone.gone()
    await expect(tab.client.fetch(`${API}/after`)).rejects.toMatchObject({ name: 'ClosedError' })
  })
})
