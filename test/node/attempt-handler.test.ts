import { Agent, request, type Dispatcher } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { Limiter } from '../../src/client/create-limiter.js'
import { none } from '../../src/core/pacers/index.js'
import { politeAgent, politeInterceptor } from '../../src/node/index.js'
import { startScriptedServer } from './scripted-server.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5))
}

describe('AttemptHandler: an attempt cancelled before undici took it up', () => {
  // request() on a clean lane dispatches the attempt before it returns; undici connects
  // later. An abort in between (the same tick, or a microtask later) used to mark the attempt
  // thrown away, so undici's onError for it was ignored and the limiter never heard that the
  // attempt ended: its in-flight slot stayed taken for good (with maxInFlight: 1, every later
  // call of the lane waited until its deadline).
  it.each(['politeAgent', 'politeInterceptor'] as const)('%s: the slot is freed, and the next call of a maxInFlight: 1 lane goes out', async (shell) => {
    const server = await startScriptedServer(() => ({ status: 200, body: 'ok' }))
    const options = { strategy: none(), maxInFlight: 1, deadlineMs: 2_000 }
    let dispatcher: Dispatcher
    let limiter: Limiter
    if (shell === 'politeAgent') {
      const agent = politeAgent(options)
      cleanups.push(() => server.close(), () => agent.close())
      dispatcher = agent
      limiter = agent.limiter
    } else {
      const interceptor = politeInterceptor(options)
      const agent = new Agent()
      cleanups.push(() => server.close(), () => agent.close(), () => interceptor.close())
      dispatcher = agent.compose(interceptor)
      limiter = interceptor.limiter
    }
    const controller = new AbortController()
    const aborted = request(`${server.url}/aborted`, { dispatcher, signal: controller.signal })
    controller.abort()
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' })
    await until(() => limiter.stats()[0]?.inFlight === 0)
    expect(limiter.stats()).toMatchObject([{ inFlight: 0, attempts: 1 }])
    const res = await request(`${server.url}/next`, { dispatcher })
    expect(await res.body.text()).toBe('ok')
    expect(server.received.map((r) => r.path)).toEqual(['/next'])
  })
})
