// The typed errors a call ends with, against a real server: they must be built whatever the
// call's numbers are, or the call never settles.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { DeadlineError } from '../../src/client/errors.js'
import { giveUpHeaderValue } from '../../src/client/give-up-header.js'
import { atb } from '../../src/core/pacers/index.js'
import { type LocalServer, startLocalServer } from '../helpers/local-server.js'
import { flushPromises, ManualClock } from '../helpers/manual-clock.js'
import { track } from '../helpers/scripted-job.js'

let server: LocalServer
let clock: ManualClock
let client: Client

beforeEach(async () => {
  server = await startLocalServer()
  clock = new ManualClock()
  client = createClient({ clock, random: () => 0, strategy: atb() })
})

afterEach(async () => {
  await client.close()
  await server.close()
})

describe('deadlineError', () => {
  // A lane paced after a 429 puts a call of cost 1e300 past any date a Date can hold: formatting
  // that time threw a RangeError out of the lane's wake timer, and the call never settled.
  it('rejects a call whose next possible attempt lies past any date, naming no date', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '1' } })
    const first = track(client.fetch(`${server.origin}/first`))
    for (let step = 0; step < 20 && !first.settled; step++) {
      await new Promise((resolve) => setTimeout(resolve, 2)) // let real I/O progress
      await clock.advance(1_000)
    }
    expect(first.value?.status).toBe(200)
    const calls = [1, 2, 3].map((n) => track(client.fetch(`${server.origin}/${n}`, { politeFetch: { cost: 1e300 } })))
    for (let step = 0; step < 20 && calls.some((call) => !call.settled); step++) {
      await new Promise((resolve) => setTimeout(resolve, 2))
      await clock.advance(1_000)
    }
    await flushPromises()
    expect(calls.every((call) => call.settled)).toBe(true)
    // The first may go at once (the lane's lump); the others wait on the pacer.
    for (const call of calls.slice(1)) {
      expect(call.error).toBeInstanceOf(DeadlineError)
      expect((call.error as DeadlineError).retryAt).toBeGreaterThan(8.64e15)
      expect((call.error as Error).message).toMatch(/beyond any date/)
    }
  })

  it('the give-up mark leaves out a retry-at no date can hold', () => {
    expect(giveUpHeaderValue('deadline', 1e300)).toBe('deadline')
    expect(giveUpHeaderValue('deadline', 0)).toBe('deadline; retry-at="1970-01-01T00:00:00.000Z"')
  })
})
