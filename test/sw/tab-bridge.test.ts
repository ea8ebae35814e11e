// @vitest-environment happy-dom
// The worker leading the lanes of a page it does not control (a hard reload): the page posts
// tab-protocol calls to the worker. A page that crashes says no bye; the worker must hear of it
// from the page's presence lock, or the page's calls hold the worker's lanes for ever.
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create-client.js'
import { createLimiter } from '../../src/client/create-limiter.js'
import { none } from '../../src/core/pacers/index.js'
import { SERVICE_WORKER_TAB_ID, type TabMessage } from '../../src/protocol/tab-messages.js'
import { createTabLimiter, type TabLimiter } from '../../src/tabs/create-tab-limiter.js'
import type { LockManagerLike } from '../../src/tabs/leader-election.js'
import { tabChannelOver } from '../../src/tabs/tab-channel.js'
import { createTabBridge, type TabBridge } from '../../sw/tab-bridge.js'
import { fakeLocks } from '../tabs/fake-locks.js'
import { API, held } from '../tabs/harness.js'

const closing: { close(): unknown }[] = []
afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c.close()))
})

/** A page whose wire reaches the worker's bridge (and back), until `crash` silences it. */
function openPage(bridge: TabBridge, locks: LockManagerLike, upstream: ReturnType<typeof held>['upstream']) {
  let deliver: ((data: unknown) => void) | undefined
  let alive = true
  const source = { postMessage: (data: unknown) => alive && deliver?.(structuredClone(data)) }
  const channel = tabChannelOver(
    {
      receive(onData) {
        deliver = onData
        return () => (deliver = undefined)
      },
      send: (message: TabMessage) => void (alive && bridge.onMessage({ data: structuredClone(message), source })),
    },
    () => {},
  )
  const limiter: TabLimiter = createTabLimiter({ channel, locks, leader: SERVICE_WORKER_TAB_ID, strategy: none(), pageEvents: new EventTarget() })
  closing.push(limiter)
  const client = createClient({ limiter, fetch: upstream })
  return {
    client,
    crash() {
      alive = false
    },
  }
}

describe('the worker as leader of a page it does not control', () => {
  it("drops the calls of a page that crashed, and frees its attempt's slot", async () => {
    const locks = fakeLocks()
    const lanes = createLimiter({ strategy: none(), maxInFlight: 1 })
    const bridge = createTabBridge(lanes, () => Date.now(), () => {}, locks)
    closing.push(bridge, lanes)
    const pageLocks = locks.tab()
    const blocker = held()
    const page = openPage(bridge, pageLocks, blocker.upstream)
    for (const i of [1, 2, 3]) void page.client.fetch(`${API}/p${i}`).catch(() => {})
    await expect.poll(() => blocker.releases.length).toBe(1)
    await expect.poll(() => lanes.stats()[0]).toMatchObject({ inFlight: 1, queued: 2 })

    page.crash()
    pageLocks.crash()
    await expect.poll(() => lanes.stats()[0]).toMatchObject({ inFlight: 0, queued: 0 })

    const next = openPage(bridge, locks.tab(), async () => new Response('next'))
    expect(await (await next.client.fetch(`${API}/after`)).text()).toBe('next')
  })

  it('keeps the calls of a page that lives, whatever group it chose', async () => {
    const locks = fakeLocks()
    const lanes = createLimiter({ strategy: none(), maxInFlight: 1 })
    const bridge = createTabBridge(lanes, () => Date.now(), () => {}, locks)
    closing.push(bridge, lanes)
    const blocker = held()
    const page = openPage(bridge, locks.tab(), blocker.upstream)
    const calls = [1, 2].map((i) => page.client.fetch(`${API}/p${i}`))
    await expect.poll(() => blocker.releases.length).toBe(1)
    blocker.releases[0]!(new Response('one'))
    await expect.poll(() => blocker.releases.length).toBe(2)
    blocker.releases[1]!(new Response('two'))
    expect(await Promise.all(calls.map(async (c) => (await c).text()))).toEqual(['one', 'two'])
    expect(lanes.stats()[0]).toMatchObject({ inFlight: 0, queued: 0, successes: 2 })
  })
})
