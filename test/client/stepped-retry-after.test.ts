// A stepped quota that answers 429s with Retry-After only (Envoy's local rate limit: a bucket
// refilled in steps; here 4 units every 10 s), over real HTTP, with the server and the client on
// one manual clock. The shipped client waits for the step the server names and then spends it
// as it lands (atb-lump.ts): every step's units go within a second of the step, and the backlog is
// done at the step that completes it, as exponential backoff honouring Retry-After would be.
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

const STEP_MS = 10_000
const UNITS = 4
const CALLS = 20

describe('20 calls at once against a bucket of 4 refilled by 4 every 10 s, Retry-After only', () => {
  it('spends each step as it lands and is done at the fourth step', async () => {
    const clock = new ManualClock(1_700_000_000_000)
    server = await startQuotaServer({
      refill: 'stepped',
      quota: { capacity: UNITS, perMinute: (UNITS * 60_000) / STEP_MS, stepIntervalMs: STEP_MS },
      feedback: 'retry-after',
      clock: () => clock.now(),
    })
    const wire = recordingFetch(clock)
    const { sentAt, statuses } = wire
    client = createClient({ clock, random: () => 0.5, fetch: wire.fetch, deadlineMs: 600_000, maxRetryAfterMs: 600_000 })
    const calls = Array.from({ length: CALLS }, (_, i) => client!.fetch(`${server!.url}/item/${i}`))
    const responses = await settleOnClock(clock, calls, wire)
    expect(responses.every((r) => r.status === 200)).toBe(true)
    const start = sentAt[0]!
    const admittedAt = sentAt.filter((_, i) => statuses[i] === 200).map((at) => at - start)
    // 4 units at the start and 4 at each step, all at once: the 20 calls are done within a second of the
    // fourth step (Retry-After counts whole seconds, rounded up, and the lane jitters its return; the
    // pacer before lump spending took 64.9 s here).
    expect(admittedAt).toHaveLength(CALLS)
    expect(Math.max(...admittedAt)).toBeLessThanOrEqual(4 * STEP_MS + 1000)
    for (let step = 1; step <= 4; step++) {
      const inStep = admittedAt.filter((t) => t >= step * STEP_MS && t < (step + 1) * STEP_MS)
      expect(inStep).toHaveLength(UNITS)
      expect(Math.max(...inStep)).toBeLessThanOrEqual(step * STEP_MS + 1000)
    }
  })
})
