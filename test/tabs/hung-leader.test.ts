// @vitest-environment happy-dom
// A leader that holds its lock but answers nothing (its main thread busy for good, or the page
// frozen): only the follower's own deadline timer ends the follower's calls. It runs on the
// limiter's clock (in a page, one a hidden tab's timer throttling does not slow).
import { afterEach, describe, expect, it } from 'vitest'
import { DeadlineError } from '../../src/client/errors.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { fakeLocks } from './fake-locks.js'
import { API, closeTabs, leadWith, newGroup, ok, openCrashableTab, openTab } from './harness.js'

afterEach(closeTabs)

describe('a leader that stops answering', () => {
  it("ends the follower's call at its deadline, by the limiter's clock", async () => {
    const group = newGroup()
    const locks = fakeLocks()
    const leader = openCrashableTab(group, locks, ok)
    await leadWith(leader)
    const clock = new ManualClock(Date.now())
    const follower = openTab(group, locks.tab(), ok, { clock })
    expect((await follower.client.fetch(`${API}/first`)).status).toBe(200)
    leader.hang()
    const call = follower.client.fetch(`${API}/lost`, { politeFetch: { deadlineMs: 5_000 } }).catch((error: unknown) => error)
    await clock.advance(5_000)
    // At once, not after 5 s of the page's own timers.
    const soon = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 500))
    expect(await Promise.race([call, soon])).toBeInstanceOf(DeadlineError)
    expect(follower.sent.map((s) => s.url)).toEqual([`${API}/first`])
  })
})
