// The server's own word on retrying (`x-should-retry`, sent by OpenAI and Anthropic) and
// Anthropic's 529, through the fetch shell against a real server on 127.0.0.1.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import type { GiveUpEvent, RetryEvent } from '../../src/client/limiter-events.js'
import { none } from '../../src/core/pacers/none.js'
import { type LocalServer, startLocalServer } from '../helpers/local-server.js'

let server: LocalServer
let client: Client
const giveUps: GiveUpEvent[] = []
const retries: RetryEvent[] = []

beforeEach(async () => {
  server = await startLocalServer()
  giveUps.length = 0
  retries.length = 0
  client = createClient({ strategy: none(), errorBackoffBaseMs: 1, errorBackoffMaxMs: 2 })
  client.on('give-up', (event) => giveUps.push(event))
  client.on('retry', (event) => retries.push(event))
})

afterEach(async () => {
  await client.close()
  await server.close()
})

describe('x-should-retry through createClient', () => {
  it('false on a 429: one attempt, the caller gets the 429 with its body', async () => {
    server.setDefault({ status: 429, headers: { 'x-should-retry': 'false', 'retry-after': '1' }, body: 'no' })
    const res = await client.fetch(`${server.origin}/v1/chat`, { method: 'POST', body: '{"a":1}' })
    expect(res.status).toBe(429)
    expect(await res.text()).toBe('no')
    expect(server.requests).toHaveLength(1)
    expect(giveUps.map((e) => [e.reason, e.status])).toEqual([['server-no-retry', 429]])
  })

  it('true on a 500: retried (a POST, the body replayed) until the server answers', async () => {
    server.reply({ status: 500, headers: { 'x-should-retry': 'true' }, body: 'oops' })
    server.setDefault({ status: 200, body: 'done' })
    const res = await client.fetch(`${server.origin}/v1/chat`, { method: 'POST', body: '{"a":1}' })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('done')
    expect(server.requests.map((r) => r.body)).toEqual(['{"a":1}', '{"a":1}'])
    expect(retries.map((e) => [e.reason, e.status])).toEqual([['ok', 500]])
  })

  it('a 500 without it is final, as before', async () => {
    server.setDefault({ status: 500, body: 'oops' })
    const res = await client.fetch(`${server.origin}/x`)
    expect(res.status).toBe(500)
    expect(server.requests).toHaveLength(1)
    expect(giveUps).toEqual([])
  })

  it('a 529 (Anthropic overloaded_error) is retried like a 503', async () => {
    server.reply({ status: 529, headers: { 'content-type': 'application/json' }, body: '{"type":"error","error":{"type":"overloaded_error"}}' })
    server.setDefault({ status: 200, body: 'ok' })
    const res = await client.fetch(`${server.origin}/v1/messages`, { method: 'POST', body: '{}' })
    expect(res.status).toBe(200)
    expect(server.requests).toHaveLength(2)
    expect(retries.map((e) => [e.reason, e.status])).toEqual([['overloaded', 529]])
  })
})
