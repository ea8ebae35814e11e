import { describe, expect, it } from 'vitest'
import { Agent, request, fetch as undiciFetch, setGlobalDispatcher, getGlobalDispatcher } from 'undici'
import { politeInterceptor } from '../../src/node/interceptor.js'
import { startScriptedServer } from './scripted-server.js'

describe('scratch', () => {
  it('request retries 429 then delivers 200', async () => {
    const server = await startScriptedServer((n) => n < 3 ? { status: 429, body: 'slow down' } : { status: 200, body: 'hello' })
    const agent = new Agent().compose(politeInterceptor())
    const res = await request(server.url + '/x', { dispatcher: agent })
    expect(res.statusCode).toBe(200)
    expect(await res.body.text()).toBe('hello')
    expect(server.received.length).toBe(3)
    const r2 = await undiciFetch(server.url + '/y', { dispatcher: agent })
    expect(r2.status).toBe(200)
    expect(await r2.text()).toBe('hello')
    await server.close()
  })
  it('global fetch', async () => {
    const server = await startScriptedServer((n) => n < 3 ? { status: 429, body: 'slow down' } : { status: 200, body: 'hello' })
    await fetch(server.url + '/warm').catch(() => {})
    const prev = getGlobalDispatcher()
    console.log(prev.constructor.name, prev instanceof Agent)
    setGlobalDispatcher(new Agent().compose(politeInterceptor()))
    const r = await fetch(server.url + '/z')
    console.log(r.status, server.received.length)
    setGlobalDispatcher(prev)
    await server.close()
  })
})
