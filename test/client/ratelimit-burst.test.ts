// A burst against IETF RateLimit headers, as a new user meets it with ky or any client that
// fires its calls at once: 12 calls into a fixed window of 3 per second, over real HTTP, with
// the server and the client on one manual clock. Only the first burst (sent before any
// response arrived) may be refused; after it, the lane spends each window at the announced
// rate, never its whole queued backlog at the reset.
import { afterEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { startQuotaServer, type QuotaServer } from '../../src/sim/quota-server.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { recordingFetch, settleOnClock } from '../helpers/virtual-burst.js'

let server: QuotaServer | undefined
let client: Client | undefined

afterEach(async () => {
  await client?.close()
  await server?.close()
})

const WINDOW_MS = 1000
const QUOTA = 3
const CALLS = 12

describe('a burst of 12 calls against RateLimit headers (3 per 1 s window)', () => {
  it('is refused only in its first burst; no later window gets more calls than announced', async () => {
    const clock = new ManualClock(1_700_000_000_000) // on a window boundary of the server's clock
    server = await startQuotaServer({
      kind: 'fixed-window',
      quota: { capacity: QUOTA, perMinute: (QUOTA * 60_000) / WINDOW_MS },
      feedback: 'ratelimit',
      clock: () => clock.now(),
    })
    const wire = recordingFetch(clock)
    const { sentAt, statuses } = wire
    client = createClient({ clock, random: () => 0.5, fetch: wire.fetch, deadlineMs: 120_000 })
    const calls = Array.from({ length: CALLS }, (_, i) => client!.fetch(`${server!.url}/item/${i}`))
    const responses = await settleOnClock(clock, calls, wire)
    expect(responses.every((r) => r.status === 200)).toBe(true)
    const start = sentAt[0]!
    const refused = statuses.filter((s) => s === 429).length
    // The first burst: 12 sent at once, 3 admitted, 9 refused. No other 429.
    expect(refused).toBe(CALLS - QUOTA)
    expect(statuses.slice(0, CALLS).filter((s) => s === 429)).toHaveLength(CALLS - QUOTA)
    // After the burst, no window receives more than its quota.
    const perWindow = new Map<number, number>()
    for (const at of sentAt.slice(CALLS)) {
      const window = Math.floor((at - start) / WINDOW_MS)
      perWindow.set(window, (perWindow.get(window) ?? 0) + 1)
    }
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(QUOTA)
    // And the backlog is done about when the announced rate allows: 9 calls at 3 a second.
    expect(sentAt[sentAt.length - 1]! - start).toBeLessThanOrEqual(5 * WINDOW_MS)
  })
})
