// What the undici shells name a request by in events and errors: method, origin and path,
// never the query string (an API key or token often rides there), as the fetch shell does.
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { GiveUpEvent } from '../../src/client/limiter-events.js'
import { none } from '../../src/core/pacers/index.js'
import { politeAgent } from '../../src/node/index.js'
import { startScriptedServer } from './scripted-server.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

describe('the undici shells label a request without its query', () => {
  it('in the give-up event, the error and its message', async () => {
    const server = await startScriptedServer(() => ({ status: 429, body: 'slow down' }))
    const agent = politeAgent({ strategy: none(), retryBudget: 0 })
    cleanups.push(() => server.close(), () => agent.close())
    const giveUps: GiveUpEvent[] = []
    agent.limiter.on('give-up', (event) => giveUps.push(event))
    const error = await request(`${server.url}/items?api_key=secret&page=2`, { dispatcher: agent }).then(
      () => undefined,
      (reason: unknown) => reason as Error & { request?: string },
    )
    expect(error).toMatchObject({ name: 'RetryBudgetError', request: `GET ${server.url}/items` })
    expect(error?.message).toBe(`polite-fetch: GET ${server.url}/items: retry budget of 0 used up after 1 attempt`)
    expect(giveUps.map((e) => e.label)).toEqual([`GET ${server.url}/items`])
    expect(server.received.map((r) => r.path)).toEqual(['/items?api_key=secret&page=2']) // sent as given
  })

  it('with the origin given as a URL object, no doubled slash', async () => {
    const server = await startScriptedServer(() => ({ status: 429, body: 'slow down' }))
    const agent = politeAgent({ strategy: none(), retryBudget: 0 })
    cleanups.push(() => server.close(), () => agent.close())
    const error = await agent.request({ origin: new URL(server.url), path: '/items?page=2', method: 'GET' }).then(
      () => undefined,
      (reason: unknown) => reason as Error & { request?: string },
    )
    expect(error).toMatchObject({ name: 'RetryBudgetError', request: `GET ${server.url}/items` })
  })
})
