// A lone call is not punished for the fleet's caution: one call on a fresh lane whose first F
// attempts meet a 429 and whose next one gets a 200, through the shipped client against a real
// HTTP server, with time on a manual clock. The bounds are the issue's: max(2 s, 2 × the mean
// time exponential backoff needs for F failures) status-only, and 2 × what exponential backoff
// honouring `Retry-After: 1` needs with it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { type LocalServer, startLocalServer } from '../helpers/local-server.js'
import { ManualClock } from '../helpers/manual-clock.js'

let server: LocalServer
let clock: ManualClock
let client: Client | undefined

beforeEach(async () => {
  server = await startLocalServer()
  clock = new ManualClock()
})

afterEach(async () => {
  await client?.close()
  await server.close()
})

/** Virtual ms from the call to its response; the clock jumps to each timer, real I/O in between. */
async function loneCall(failures: number, headers: Record<string, string> = {}, random = 0.5): Promise<number> {
  // The real fetch, counted: virtual time moves only while no attempt is on the wire.
  let onWire = 0
  const counted = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    onWire++
    try {
      return await fetch(input, init)
    } finally {
      onWire--
    }
  }
  client = createClient({ clock, random: () => random, fetch: counted })
  for (let i = 0; i < failures; i++) server.reply({ status: 429, headers })
  const t0 = clock.now()
  let settled = false
  const call = client.fetch(`${server.origin}/lone`).finally(() => (settled = true))
  for (let turn = 0; turn < 500 && !settled; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    if (!settled && onWire === 0) await clock.next(3_600_000)
  }
  const response = await call
  expect(response.status).toBe(200)
  expect(server.requests).toHaveLength(failures + 1)
  return clock.now() - t0
}

// Exponential backoff (the paper's UB) waits U(0.1 s, 2^n − 1 s) after failure n: its mean total
// for F failures is 0.55, 2.1, 5.65 and 28.75 s; the bounds are twice that (at least 2 s).
const STATUS_ONLY_BOUNDS_MS: Array<[number, number]> = [[1, 2_000], [2, 4_200], [3, 11_300], [5, 57_500]]
// Honouring Retry-After: 1, exponential backoff waits max(1 s, U(0.1 s, 2^n − 1 s)); mean totals
// 1.0, 2.69, 6.30 and 29.4 s, doubled.
const RETRY_AFTER_BOUNDS_MS: Array<[number, number]> = [[1, 2_000], [2, 5_380], [3, 12_600], [5, 58_800]]

describe('a lone call on a fresh lane (default atb)', () => {
  for (const [failures, boundMs] of STATUS_ONLY_BOUNDS_MS) {
    it(`is done within ${boundMs / 1000} s after ${failures} bare 429s`, async () => {
      // Every draw of the lane's jitter, not only the middle one.
      for (const random of [0, 0.5, 0.999]) {
        await client?.close()
        clock = new ManualClock()
        server.requests.length = 0
        expect(await loneCall(failures, {}, random)).toBeLessThanOrEqual(boundMs)
      }
    })
  }
  for (const [failures, boundMs] of RETRY_AFTER_BOUNDS_MS) {
    it(`is done within ${boundMs / 1000} s after ${failures} 429s with Retry-After: 1, never before it`, async () => {
      const elapsed = await loneCall(failures, { 'retry-after': '1' })
      expect(elapsed).toBeLessThanOrEqual(boundMs)
      expect(elapsed).toBeGreaterThanOrEqual(failures * 1000)
    })
  }
})
