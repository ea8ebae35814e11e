// The recipes' burst in virtual time: 12 calls at once through the fetch shell (default ATB)
// against the vendor mock (3 per 1 s window) over real HTTP, the server and the client on one
// manual clock, the burst landing at several points of the window. With each vendor's headers —
// none of which but the IETF fields announces a window — only the first burst is refused, no
// later window gets more than its 3, and the 12 are done within the 4 windows they need.
import { afterEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { recordingFetch, settleOnClock } from '../helpers/virtual-burst.js'
import { startVendorMock, type Vendor, type VendorMock } from './vendor-mock.js'

let server: VendorMock | undefined
let client: Client | undefined

afterEach(async () => {
  await client?.close()
  await server?.close()
})

const WINDOW_MS = 1000
const QUOTA = 3
const CALLS = 12
/** A whole second of the clock: where the GitHub mock's windows begin; the others begin when the mock starts. */
const START = 1_700_000_000_000

async function burstInVirtualTime(vendor: Vendor, startOffsetMs: number, burstOffsetMs: number): Promise<{ sentAt: number[]; statuses: number[]; windowStart: number }> {
  const clock = new ManualClock(START + startOffsetMs)
  server = await startVendorMock(vendor, { clock: () => clock.now() })
  const windowStart = vendor === 'github' ? START : START + startOffsetMs
  await clock.advance(burstOffsetMs)
  const wire = recordingFetch(clock)
  const { sentAt, statuses } = wire
  client = createClient({ clock, random: () => 0.5, fetch: wire.fetch, deadlineMs: 120_000 })
  const calls = Array.from({ length: CALLS }, (_, i) =>
    client!.fetch(`${server!.url}/items/${i}`, { method: 'POST', body: `{"echo":"call-${i}"}` }),
  )
  const responses = await settleOnClock(clock, calls, wire)
  expect(responses.map((r) => r.status)).toEqual(Array(CALLS).fill(200))
  return { sentAt, statuses, windowStart }
}

describe.each<Vendor>(['openai', 'anthropic', 'github', 'ietf'])('12 calls at once against 3 per 1 s with %s headers, in virtual time', (vendor) => {
  it.each([
    [0, 0],
    [300, 0],
    [0, 450],
    [700, 980],
  ])('mock started %i ms past a second, burst %i ms into its window: 9 429s, all in the first burst, then 3 windows of 3', async (startOffsetMs, burstOffsetMs) => {
    const { sentAt, statuses, windowStart } = await burstInVirtualTime(vendor, startOffsetMs, burstOffsetMs)
    const start = sentAt[0]!
    // The first burst: 12 sent before any answer, 3 admitted, 9 refused. No other 429.
    expect(statuses.slice(0, CALLS).filter((s) => s === 429)).toHaveLength(CALLS - QUOTA)
    expect(statuses.filter((s) => s === 429)).toHaveLength(CALLS - QUOTA)
    // After the burst the 9 retries fill 3 consecutive windows of the server's, 3 each: no window
    // gets more than it holds, and none the lane could use is left empty. (The first of them is
    // where the Retry-After, in whole seconds, lets the lane in: a burst 20 ms before the reset is
    // told 1 s.)
    const perWindow = new Map<number, number>()
    for (const at of sentAt.slice(CALLS)) {
      const window = Math.floor((at - windowStart) / WINDOW_MS)
      perWindow.set(window, (perWindow.get(window) ?? 0) + 1)
    }
    const windows = [...perWindow.keys()].sort((a, b) => a - b)
    expect(windows).toEqual([windows[0], windows[0]! + 1, windows[0]! + 2])
    expect([...perWindow.values()]).toEqual([QUOTA, QUOTA, QUOTA])
    const firstWindow = Math.floor((start - windowStart) / WINDOW_MS)
    expect(windows[0]).toBeLessThanOrEqual(firstWindow + 2)
  })
})
