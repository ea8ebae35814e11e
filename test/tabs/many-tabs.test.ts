// @vitest-environment happy-dom
// Ten tabs, two scopes led by two different tabs, a few hundred calls with 429s among them:
// every call settles once, each attempt is sent once, and closing every tab leaves no timer.
import { afterEach, describe, expect, it } from 'vitest'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, newGroup, openTab, type Tab, type Upstream } from './harness.js'

afterEach(closeTabs)

const OTHER = 'https://other.example'
const TABS = 10
const CALLS_PER_TAB = 30

/** Every third URL is refused once (429, retry at once), then answered. */
function quota(): { upstream: Upstream; sends: Map<string, number> } {
  const sends = new Map<string, number>()
  const upstream: Upstream = async (input) => {
    const url = String(input)
    const n = (sends.get(url) ?? 0) + 1
    sends.set(url, n)
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 3))
    const refused = Number(new URL(url).pathname.split('/')[2]) % 3 === 0 && n === 1
    return refused ? new Response('later', { status: 429, headers: { 'retry-after': '0' } }) : new Response(url)
  }
  return { upstream, sends }
}

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

describe.each([
  ['Web Locks', true],
  ['the BroadcastChannel election', false],
])('many tabs, two scopes, with %s', (_name, withLocks) => {
  it('every call settles once, each attempt is sent once, and no timer is left after close', async () => {
    const before = timers()
    const group = newGroup()
    const locks = withLocks ? fakeLocks() : null
    const { upstream, sends } = quota()
    const tabs: Tab[] = []
    for (let i = 0; i < TABS; i++) tabs.push(openTab(group, locks && locks.tab(), upstream, { maxInFlight: 4 }))
    // Tab 0 leads API, tab 1 leads OTHER (with locks the first to ask leads; without, the lowest id).
    expect((await tabs[0]!.client.fetch(`${API}/warm/0`)).status).toBe(200)
    expect((await tabs[1]!.client.fetch(`${OTHER}/warm/0`)).status).toBe(200)
    const calls = tabs.flatMap((tab, t) =>
      Array.from({ length: CALLS_PER_TAB }, (_, i) => tab.client.fetch(`${i % 2 === 0 ? API : OTHER}/t${t}/${i}`).then((r) => r.text())),
    )
    const texts = await Promise.all(calls)
    expect(texts).toEqual(tabs.flatMap((_, t) => Array.from({ length: CALLS_PER_TAB }, (_, i) => `${i % 2 === 0 ? API : OTHER}/t${t}/${i}`)))
    for (const [url, n] of sends) {
      if (url.includes('/warm/')) continue
      expect([url, n]).toEqual([url, Number(new URL(url).pathname.split('/')[2]) % 3 === 0 ? 2 : 1])
    }
    const leaders = tabs.map((tab) => tab.limiter.info().leaders)
    expect(new Set(leaders.map((l) => l[API])).size).toBe(1)
    expect(new Set(leaders.map((l) => l[OTHER])).size).toBe(1)
    if (withLocks) {
      expect(leaders[0]![API]).toBe(tabs[0]!.limiter.tabId)
      expect(leaders[0]![OTHER]).toBe(tabs[1]!.limiter.tabId)
    }
    for (const tab of tabs) for (const lane of tab.limiter.stats()) expect(lane).toMatchObject({ inFlight: 0, queued: 0 })
    await closeTabs()
    await expect.poll(timers).toBeLessThanOrEqual(before)
  })
})
