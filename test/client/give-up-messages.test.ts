// A give-up's message names the request it ends, as DeadlineError's always did: with many
// calls in flight, "retry budget of 0 used up" alone does not say which one gave up.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { RetryAfterTooLongError, RetryBudgetError } from '../../src/client/errors.js'
import type { ClientOptions } from '../../src/client/options.js'
import { type LocalServer, startLocalServer } from '../helpers/local-server.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'

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

function makeClient(options: ClientOptions): Client {
  client = createClient({ clock, random: () => 0, strategy: recordingStrategy({ intervalMs: 10 }), ...options })
  return client
}

describe('give-up errors name their request', () => {
  it('RetryBudgetError: the request (its query left out, as in every label) and the attempts made', async () => {
    makeClient({ retryBudget: 0 })
    server.reply({ status: 429 })
    const error = await makeClientFetch(`${server.origin}/items?page=2`, { method: 'POST', body: 'x' })
    expect(error).toBeInstanceOf(RetryBudgetError)
    expect((error as Error).message).toBe(`polite-fetch: POST ${server.origin}/items: retry budget of 0 used up after 1 attempt`)
  })

  it('RetryAfterTooLongError: the request, the wait asked for and the bound', async () => {
    makeClient({ maxRetryAfterMs: 5_000 })
    server.reply({ status: 429, headers: { 'retry-after': '3600' } })
    const error = await makeClientFetch(`${server.origin}/x`)
    expect(error).toBeInstanceOf(RetryAfterTooLongError)
    expect((error as Error).message).toBe(
      `polite-fetch: GET ${server.origin}/x: the server asked to wait 3600000 ms, more than maxRetryAfterMs (5000)`,
    )
  })
})

async function makeClientFetch(url: string, init?: RequestInit): Promise<unknown> {
  try {
    await client!.fetch(url, init)
  } catch (error) {
    return error
  }
  throw new Error('the call resolved')
}
