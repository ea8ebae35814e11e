// `deadlineMs: 1500`, 10 calls at once against 3 per 1 s, through the fetch shell with the
// default ATB and each vendor's headers: the calls that cannot make it end as soon as the
// lane's pacing says so, and no call outlives its deadline.
import { describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create-client.js'
import { startVendorMock, type Vendor } from './vendor-mock.js'

interface Ending {
  ok: boolean
  name: string
  atMs: number
}

async function tenAgainstThreePerSecond(vendor: Vendor): Promise<Ending[]> {
  const server = await startVendorMock(vendor)
  const client = createClient({ deadlineMs: 1_500 })
  try {
    const t0 = performance.now()
    return await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client.fetch(`${server.url}/items/${i}`, { method: 'POST', body: `{"n":${i}}` }).then(
          async (res) => ({ ok: res.ok, name: String(res.status), atMs: performance.now() - t0, body: await res.text() }),
          (error: Error) => ({ ok: false, name: error.name, atMs: performance.now() - t0 }),
        ),
      ),
    )
  } finally {
    await client.close()
    await server.close()
  }
}

// Slack over the deadline for a loaded machine: the timers are exact, the event loop is not.
const SLACK_MS = 400

describe.each<Vendor>(['openai', 'anthropic', 'github', 'ietf'])('deadlineMs: 1500 with %s headers', (vendor) => {
  it('the first 3 succeed, every other call succeeds or rejects with DeadlineError by the deadline', async () => {
    const endings = await tenAgainstThreePerSecond(vendor)
    expect(endings.filter((e) => e.ok).length).toBeGreaterThanOrEqual(3)
    for (const ending of endings.filter((e) => !e.ok)) expect(ending.name).toBe('DeadlineError')
    expect(Math.max(...endings.map((e) => e.atMs))).toBeLessThan(1_500 + SLACK_MS)
  }, 30_000)

  // The window reopens at 1 s with room for 3: the lane sends one attempt at the reset and spends
  // what its answer says is left, instead of spacing the queued calls past the deadline; the other
  // 4 end as soon as the window is spent (its next reset lies past their deadline).
  it('the 3 calls that fit the window reopened at 1 s succeed too', async () => {
    const endings = await tenAgainstThreePerSecond(vendor)
    expect(endings.filter((e) => e.ok).length).toBeGreaterThanOrEqual(6)
    for (const ending of endings.filter((e) => !e.ok)) {
      expect(ending.name).toBe('DeadlineError')
      expect(ending.atMs).toBeLessThan(1_500 + SLACK_MS)
    }
  }, 30_000)
})
