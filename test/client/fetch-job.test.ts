// The fetch job's verdicts on failures, against a real server and Node's fetch (undici).
import { getEventListeners } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { createLimiter } from '../../src/client/create-limiter.js'
import type { LimiterEventName, LimiterEvents } from '../../src/client/limiter-events.js'
import { type LocalServer, startLocalServer } from '../helpers/local-server.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'

let server: LocalServer
let client: Client

beforeEach(async () => {
  server = await startLocalServer()
  // The clock never moves: a call that retried would wait on it, and its retry event says so.
  client = createClient({ clock: new ManualClock(), random: () => 0, strategy: recordingStrategy({ intervalMs: 10 }) })
})

afterEach(async () => {
  await client.close()
  await server.close()
})

function next<E extends LimiterEventName>(event: E): Promise<[E, LimiterEvents[E]]> {
  return new Promise((resolve) => {
    const off = client.on(event, (payload) => {
      off()
      resolve([event, payload])
    })
  })
}

describe('FetchJob: failures fetch itself decided', () => {
  // fetch rejects these with the TypeError of a network failure, but the same request gets
  // the same refusal every time: plain fetch fails once, and so must a GET we would retry.
  it("gives up at once on redirect: 'error' meeting a redirect, as fetch does", async () => {
    server.setDefault({ status: 302, headers: { location: '/elsewhere' } })
    const ended = Promise.race([next('give-up'), next('retry')])
    const call = client.fetch(`${server.origin}/a`, { redirect: 'error' })
    call.catch(() => {})
    const [event, payload] = await ended
    expect(event).toBe('give-up')
    expect(payload.reason).toBe('fetch-refused')
    await expect(call).rejects.toThrow(TypeError)
    expect(server.requests).toHaveLength(1)
  })

  it('gives up at once on a redirect loop (redirect count exceeded)', async () => {
    server.setDefault({ status: 302, headers: { location: '/loop' } })
    const ended = Promise.race([next('give-up'), next('retry')])
    const call = client.fetch(`${server.origin}/loop`)
    call.catch(() => {})
    expect((await ended)[0]).toBe('give-up')
    await expect(call).rejects.toThrow(TypeError)
    expect(server.requests).toHaveLength(21) // one attempt: the request and its 20 redirects
  })

  it('gives up at once on a port fetch blocks', async () => {
    const ended = Promise.race([next('give-up'), next('retry')])
    const call = client.fetch('http://127.0.0.1:6000/') // X11: on fetch's bad-port list
    call.catch(() => {})
    expect((await ended)[0]).toBe('give-up')
    await expect(call).rejects.toThrow(TypeError)
  })

  it('still retries a GET whose connection was reset', async () => {
    server.reply('destroy')
    const ended = Promise.race([next('give-up'), next('retry')])
    void client.fetch(`${server.origin}/a`).catch(() => {})
    const [event] = await ended
    expect(event).toBe('retry')
  })
})

describe('FetchJob: a body factory that throws', () => {
  // The caller's code failed before anything was sent: no network error to wait out.
  it('ends the call with its error at once, even for a method whose network errors are retried', async () => {
    const failure = new Error('no such file')
    let calls = 0
    const ended = Promise.race([next('give-up'), next('retry')])
    const call = client.fetch(`${server.origin}/a`, {
      method: 'PUT',
      politeFetch: {
        body: () => {
          calls++
          throw failure
        },
      },
    })
    call.catch(() => {})
    const [event, payload] = await ended
    expect(event).toBe('give-up')
    expect(payload.reason).toBe('body-factory-failed')
    await expect(call).rejects.toBe(failure)
    expect(calls).toBe(1)
    expect(server.requests).toHaveLength(0)
  })
})

describe('FetchJob: the signal fetch gets', () => {
  it("init's signal: null frees the call from its Request's signal, as in fetch", async () => {
    const controller = new AbortController()
    controller.abort('the Request gave up')
    const request = new Request(`${server.origin}/a`, { signal: controller.signal })
    const ended = Promise.race([client.fetch(request, { signal: null }), next('retry')])
    const response = (await ended) as Response
    expect(response.status).toBe(200)
    expect(server.requests).toHaveLength(1)
  })
})

describe("FetchJob: the caller's signal", () => {
  // A caller's signal may live as long as the app: each call's listeners on it must go when the
  // call has ended (a response's relay goes with the Response, to garbage collection).
  it.each([{ timeoutMs: 10_000 }, { shared: true }])('keeps no listener on it once a call has failed (%o)', async ({ shared, ...options }) => {
    const clock = new ManualClock()
    const limiter = shared === true ? createLimiter({ clock, strategy: recordingStrategy({ intervalMs: 10 }) }) : undefined
    const own = createClient(limiter === undefined ? { clock, strategy: recordingStrategy({ intervalMs: 10 }), ...options } : { limiter })
    const appSignal = new AbortController().signal
    server.reply('destroy')
    await expect(own.fetch(`${server.origin}/a`, { method: 'POST', body: 'x', signal: appSignal })).rejects.toThrow(TypeError)
    expect(getEventListeners(appSignal, 'abort')).toHaveLength(0)
    await own.close()
    await limiter?.close()
  })
})

describe('FetchJob: the caller aborts while reading the body', () => {
  // As with fetch, the caller's signal ends the body too. With `timeoutMs` the attempt has a
  // signal of the limiter's own, which lets go of the caller's once the call resolves.
  it.each([{}, { timeoutMs: 10_000 }, { shared: true }])('rejects the read with the reason (%o)', async ({ shared, ...options }) => {
    const streaming = createServer((_request, response) => {
      response.writeHead(200)
      response.write('first') // and never ends
    })
    await new Promise<void>((resolve) => streaming.listen(0, '127.0.0.1', resolve))
    const origin = `http://127.0.0.1:${(streaming.address() as AddressInfo).port}`
    const clock = new ManualClock()
    // Over a shared limiter, the call's signal is one of the client's, which close() aborts.
    const limiter = shared === true ? createLimiter({ clock, strategy: recordingStrategy({ intervalMs: 10 }) }) : undefined
    const own = createClient(limiter === undefined ? { clock, strategy: recordingStrategy({ intervalMs: 10 }), ...options } : { limiter })
    try {
      const controller = new AbortController()
      const response = await own.fetch(origin, { signal: controller.signal })
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      await reader.read()
      const rest = reader.read()
      controller.abort('user cancelled')
      await expect(rest).rejects.toBe('user cancelled')
    } finally {
      await own.close()
      await limiter?.close()
      streaming.closeAllConnections()
      streaming.close()
    }
  })
})
