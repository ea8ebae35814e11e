import { Readable } from 'node:stream'
import { Agent, fetch as undiciFetch, getGlobalDispatcher, request, setGlobalDispatcher, type Dispatcher } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { GiveUpEvent } from '../../src/client/limiter-events.js'
import { createLimiter } from '../../src/client/create-limiter.js'
import { none } from '../../src/core/pacers/index.js'
import { politeAgent, type PoliteAgent, type PoliteAgentOptions } from '../../src/node/index.js'
import { startScriptedServer, type Reply, type ScriptedServer } from './scripted-server.js'
import { throttleFirst } from './shell-test-kit.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

// Mechanics are tested with the `none` strategy (retry at once, no pacing); pacing with
// a strategy whose spacing after congestion is known.
async function setup(script: (n: number) => Reply, options: PoliteAgentOptions = {}) {
  const server: ScriptedServer = await startScriptedServer(script)
  const agent = politeAgent({ strategy: none(), ...options })
  const giveUps: GiveUpEvent[] = []
  agent.limiter.on('give-up', (event) => giveUps.push(event))
  cleanups.push(() => server.close(), () => agent.close())
  return { server, agent, limiter: agent.limiter, giveUps }
}


const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5))
}

// What every undici shell does (retry, pacing, Retry-After, replay, abort, timeouts) is
// tested for politeAgent in pacing.test.ts; here is what only the agent is or does.
describe('politeAgent with undici.request', () => {
  it('is a Dispatcher of its own, not a composed Proxy, and passes a healthy response through in one attempt', async () => {
    const { server, agent, limiter } = await setup(() => ({ status: 201, headers: { 'x-test': 'yes' }, body: 'created' }))
    // compose() returns a Proxy whose `dispatch` is not the class's own method.
    expect(agent.dispatch).toBe(Object.getPrototypeOf(agent).dispatch)
    const res = await request(`${server.url}/things?q=1`, { dispatcher: agent, method: 'PUT', body: 'x' })
    expect(res.statusCode).toBe(201)
    expect(res.headers['x-test']).toBe('yes')
    expect(await res.body.text()).toBe('created')
    expect(server.received.map((r) => `${r.method} ${r.path} ${r.body}`)).toEqual(['PUT /things?q=1 x'])
    expect(limiter.stats()).toMatchObject([{ scope: server.url, attempts: 1, successes: 1, throttled: 0 }])
  })

  it('answers its own request() like undici.request: a 429 is swallowed and retried', async () => {
    const { server, agent, limiter } = await setup(throttleFirst(1))
    const res = await agent.request({ origin: server.url, path: '/items/1', method: 'GET' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-answer']).toBe('2')
    expect(await res.body.text()).toBe('ok 2')
    expect(server.received).toHaveLength(2)
    expect(limiter.stats()).toMatchObject([{ attempts: 2, throttled: 1, retries: 1, successes: 1 }])
  })

  it('reads Retry-After (seconds): a wait past the deadline fails fast with DeadlineError', async () => {
    const { server, agent, giveUps } = await setup(() => ({ status: 429, headers: { 'retry-after': '30' }, body: 'later' }), {
      deadlineMs: 5_000,
    })
    await expect(request(`${server.url}/`, { dispatcher: agent })).rejects.toMatchObject({ name: 'DeadlineError', retryAt: expect.any(Number) })
    expect(server.received).toHaveLength(1)
    expect(giveUps.map((e) => e.reason)).toEqual(['deadline'])
  })

  it('replays a Buffer body on retry', async () => {
    const { server, agent } = await setup(throttleFirst(1))
    const res = await request(`${server.url}/orders`, { dispatcher: agent, method: 'POST', body: Buffer.from('payload') })
    await res.body.dump()
    expect(res.statusCode).toBe(200)
    expect(server.received.map((r) => `${r.method} ${r.body}`)).toEqual(['POST payload', 'POST payload'])
  })

})

describe('politeAgent as the global dispatcher', () => {
  it('paces undici.request, undici.fetch and Node’s own global fetch', async () => {
    const { server, agent, limiter } = await setup(throttleFirst(1))
    const previous = getGlobalDispatcher()
    setGlobalDispatcher(agent)
    try {
      expect(await (await request(`${server.url}/a`)).body.text()).toBe('ok 2')
      expect(await (await undiciFetch(`${server.url}/b`)).text()).toBe('ok 3')
      // Node's global fetch is its bundled undici, reading the same global dispatcher.
      expect(globalThis.fetch).not.toBe(undiciFetch)
      expect(await (await fetch(`${server.url}/c`)).text()).toBe('ok 4')
    } finally {
      setGlobalDispatcher(previous)
    }
    expect(server.received.map((r) => r.path)).toEqual(['/a', '/a', '/b', '/c'])
    expect(limiter.stats()[0]).toMatchObject({ attempts: 4, throttled: 1, successes: 3 })
  })
})

describe('politeAgent lifecycle', () => {
  it('sends its attempts through a given dispatcher, which close() leaves open', async () => {
    const dispatched: string[] = []
    const base = new Agent()
    const recorded = base.compose((dispatch) => (opts, handler) => {
      dispatched.push(opts.path)
      return dispatch(opts, handler)
    })
    cleanups.push(() => base.close())
    const { server, agent } = await setup(throttleFirst(1), { dispatcher: recorded })
    expect(agent.dispatcher).toBe(recorded)
    await (await request(`${server.url}/x`, { dispatcher: agent })).body.dump()
    // Each attempt is a dispatch of its own down the given dispatcher.
    expect(dispatched).toEqual(['/x', '/x'])
    await agent.close()
    expect(agent.closed).toBe(true)
    expect(base.closed).toBe(false)
    expect(await (await request(`${server.url}/y`, { dispatcher: base })).body.text()).toBe('ok 3')
  })

  it('after close(), a dispatch fails at once with ClientClosedError; its own Agent is closed', async () => {
    const { server, agent } = await setup(() => ({ status: 200 }))
    await (await request(`${server.url}/`, { dispatcher: agent })).body.dump()
    await agent.close()
    expect((agent.dispatcher as Agent).closed).toBe(true)
    await expect(request(`${server.url}/`, { dispatcher: agent })).rejects.toMatchObject({ name: 'ClientClosedError' })
    expect(server.received).toHaveLength(1)
  })

  it('close() rejects requests waiting in a lane with ClosedError', async () => {
    const { server, agent, limiter } = await setup(() => ({ status: 429, headers: { 'retry-after': '20' } }))
    const waiting = request(`${server.url}/`, { dispatcher: agent })
    await until(() => limiter.stats()[0]?.queued === 1)
    const rejected = expect(waiting).rejects.toMatchObject({ name: 'ClosedError' })
    await agent.close()
    await rejected
    expect(server.received).toHaveLength(1)
  })

  it.each(['close', 'destroy'] as const)('%s() rejects a request whose body is still being read with ClosedError, unsent', async (how) => {
    // Such a dispatch is in no lane yet (its body is read first, to be replayable): before, close()
    // and destroy() resolved and left it pending until its producer ended the body.
    const { server, agent } = await setup(() => ({ status: 200, body: 'ok' }))
    const body = new Readable({ read() {} })
    body.push('the start of a body')
    let outcome = 'pending'
    const call = request(`${server.url}/upload`, { dispatcher: agent, method: 'POST', body }).then(
      () => (outcome = 'answered'),
      (error: Error) => (outcome = error.name),
    )
    await new Promise((resolve) => setImmediate(resolve))
    await (how === 'close' ? agent.close() : agent.destroy())
    for (let i = 0; i < 5 && outcome === 'pending'; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(outcome).toBe('ClosedError')
    body.push(null)
    await call
    expect(server.received).toHaveLength(0)
  })

  it('a shared limiter stays open when the agent closes', async () => {
    const limiter = createLimiter({ strategy: none() })
    cleanups.push(() => limiter.close())
    const { server, agent } = await setup(() => ({ status: 200 }), { limiter })
    await (await request(`${server.url}/`, { dispatcher: agent })).body.dump()
    await agent.close()
    const other = politeAgent({ limiter })
    cleanups.push(() => other.close())
    await (await request(`${server.url}/`, { dispatcher: other })).body.dump()
    expect(limiter.stats()[0]).toMatchObject({ attempts: 2, successes: 2 })
  })

  it('over a shared limiter, close() still rejects its own waiting and in-flight requests with ClosedError', async () => {
    // Before: the shared limiter was left open (rightly) and with it this agent's calls: they
    // waited out the 20 s Retry-After, then failed on the closed Agent underneath.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const limiter = createLimiter({ strategy: none() })
    cleanups.push(() => limiter.close())
    const { server, agent } = await setup(
      (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '20' } } : { status: 200, body: 'held', holdUntil: held }),
      { limiter },
    )
    const other = politeAgent({ limiter })
    cleanups.push(async () => release(), () => other.close())
    const settled = (promise: Promise<Dispatcher.ResponseData>) => promise.then(() => 'answered', (error: Error) => error.name)
    const waiting = settled(request(`${server.url}/gated`, { dispatcher: agent }))
    await until(() => limiter.stats()[0]?.queued === 1)
    // Another origin of the same limiter, in flight when the agent closes.
    const inFlight = settled(request(`${server.url.replace('127.0.0.1', 'localhost')}/held`, { dispatcher: agent }))
    await until(() => server.received.length === 2)
    await agent.close()
    expect([await waiting, await inFlight]).toEqual(['ClosedError', 'ClosedError'])
    // The shared limiter and the other agent on it carry on.
    expect(limiter.stats().map((lane) => lane.inFlight + lane.queued)).toEqual([0, 0])
    release()
    const res = await request(`${server.url.replace('127.0.0.1', 'localhost')}/other`, { dispatcher: other })
    expect(await res.body.text()).toBe('held')
  })

  it('destroy(callback) settles and destroys its own Agent', async () => {
    const agent: PoliteAgent = politeAgent()
    await new Promise<void>((resolve) => agent.destroy(resolve))
    expect(agent.destroyed).toBe(true)
    expect((agent.dispatcher as Dispatcher & { destroyed: boolean }).destroyed).toBe(true)
  })

  it('re-emits the connection events of its own Agent', async () => {
    const { server, agent } = await setup(() => ({ status: 200 }))
    const connected: string[] = []
    agent.on('connect', (origin) => connected.push(String(origin)))
    await (await request(`${server.url}/`, { dispatcher: agent })).body.dump()
    expect(connected).toEqual([`${server.url}/`])
  })
})

describe('politeAgent over another polite layer (install() twice, or an agent given a polite dispatcher)', () => {
  it("takes the inner layer's give-up as final: the server sees the inner layer's attempts only", async () => {
    const server: ScriptedServer = await startScriptedServer(() => ({ status: 429, headers: { 'retry-after': '120' }, body: 'later' }))
    const inner = politeAgent({ strategy: none() })
    const outer = politeAgent({ strategy: none(), dispatcher: inner })
    cleanups.push(() => server.close(), () => outer.close(), () => inner.close())
    const error = await request(`${server.url}/stacked`, { dispatcher: outer }).then(
      () => undefined,
      (reason: unknown) => reason as Error,
    )
    // The inner layer refuses the 120 s wait (maxRetryAfterMs 60 s); retried as a network failure,
    // the outer layer sent the request again and again until its own deadline.
    expect(error?.name).toBe('RetryAfterTooLongError')
    expect(server.received).toHaveLength(1)
    expect(outer.limiter.stats()[0]).toMatchObject({ attempts: 1, inFlight: 0 })
  })
})
