// `x-should-retry` and 529 through the undici shell (politeAgent), against a real server.
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { GiveUpEvent } from '../../src/client/limiter-events.js'
import { none } from '../../src/core/pacers/index.js'
import { politeAgent } from '../../src/node/index.js'
import { startScriptedServer, type Reply } from './scripted-server.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function setup(script: (n: number) => Reply) {
  const server = await startScriptedServer(script)
  const agent = politeAgent({ strategy: none(), errorBackoffBaseMs: 1, errorBackoffMaxMs: 2 })
  const giveUps: GiveUpEvent[] = []
  agent.limiter.on('give-up', (event) => giveUps.push(event))
  cleanups.push(() => server.close(), () => agent.close())
  return { server, agent, giveUps }
}

describe('politeAgent and the server’s word on retrying', () => {
  it('x-should-retry: false on a 429 hands the 429 over after one attempt', async () => {
    const { server, agent, giveUps } = await setup(() => ({ status: 429, headers: { 'x-should-retry': 'false' }, body: 'no' }))
    const res = await request(`${server.url}/v1/chat`, { dispatcher: agent, method: 'POST', body: '{"a":1}' })
    expect(res.statusCode).toBe(429)
    expect(await res.body.text()).toBe('no')
    expect(server.received).toHaveLength(1)
    expect(giveUps.map((e) => e.reason)).toEqual(['server-no-retry'])
  })

  it('x-should-retry: true on a 500 is retried, the body replayed', async () => {
    const { server, agent } = await setup((n) =>
      n === 1 ? { status: 500, headers: { 'x-should-retry': 'true' }, body: 'oops' } : { status: 200, body: 'done' },
    )
    const res = await request(`${server.url}/v1/chat`, { dispatcher: agent, method: 'POST', body: '{"a":1}' })
    expect(res.statusCode).toBe(200)
    expect(await res.body.text()).toBe('done')
    expect(server.received.map((r) => r.body)).toEqual(['{"a":1}', '{"a":1}'])
  })

  it('a 529 is retried like a 503', async () => {
    const { server, agent } = await setup((n) => (n === 1 ? { status: 529, body: 'overloaded' } : { status: 200, body: 'ok' }))
    const res = await request(`${server.url}/v1/messages`, { dispatcher: agent })
    expect(res.statusCode).toBe(200)
    expect(await res.body.text()).toBe('ok')
    expect(server.received).toHaveLength(2)
  })
})
