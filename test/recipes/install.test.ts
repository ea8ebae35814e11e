// `install()`: every undici request of the process paced, SDKs included, with no `fetch`
// option anywhere. What it cannot reach (clients on node:http) is shown too.
import axios from 'axios'
import got from 'got'
import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { install, type Installed } from '../../src/node/index.js'
import { startVendorMock, type VendorMock } from './vendor-mock.js'

let installed: Installed | undefined
let server: VendorMock | undefined
afterEach(async () => {
  await installed?.close()
  installed = undefined
  await server?.close()
  server = undefined
})

describe('install() with the real SDKs', () => {
  it('OpenAI with maxRetries: 0 through the global fetch: 12 of 12 POSTs succeed, bodies identical on the server', async () => {
    server = await startVendorMock('openai')
    installed = install({ giveUp: 'response' })
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 })
    const ids = Array.from({ length: 12 }, (_, i) => `call-${i}`)
    const answers = await Promise.all(
      ids.map(async (id) => (await openai.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: id }] })).choices[0]?.message.content),
    )
    expect(answers).toEqual(ids)
    const bodies = new Map<string, Set<string>>()
    for (const request of server.requests) {
      const id = (JSON.parse(request.body.toString()) as { messages: { content: string }[] }).messages[0]!.content
      bodies.set(id, (bodies.get(id) ?? new Set()).add(request.body.toString('hex')))
    }
    expect([...bodies.values()].every((variants) => variants.size === 1)).toBe(true)
    expect(server.throttled()).toBeGreaterThan(0) // the retries were polite-fetch's, not the SDK's
    expect(server.requests).toHaveLength(12 + server.throttled())
    expect(installed.limiter.stats().reduce((sum, lane) => sum + lane.attempts, 0)).toBe(server.requests.length)
  }, 60_000)

  it('does not reach got or axios’s default http adapter: they use node:http, not undici (the limiter sees 0 attempts)', async () => {
    server = await startVendorMock('ietf')
    installed = install()
    const viaGot = await got.post(`${server.url}/items`, { json: { echo: 'got' }, throwHttpErrors: false, retry: { limit: 0 } })
    const viaAxios = await axios.post(`${server.url}/items`, { echo: 'axios' })
    expect([viaGot.statusCode, viaAxios.status]).toEqual([200, 200])
    expect(server.requests).toHaveLength(2)
    expect(installed.limiter.stats()).toEqual([])
  })
})
