import { Agent, request, type Dispatcher } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { Limiter } from '../../src/client/create-limiter.js'
import { none } from '../../src/core/pacers/index.js'
import { politeAgent, politeInterceptor } from '../../src/node/index.js'
import { createPacing } from '../../src/node/pacing.js'
import type { CallerHandler } from '../../src/node/paced-dispatch.js'
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

/** Deterministic pseudo-random numbers in [0, 1) (an LCG: the same seed, the same run). */
function seeded(seed: number): () => number {
  let state = seed
  return () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
}

// A timer turn: retries wait on the limiter's timers (a 1–2 ms error backoff here).
const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('AttemptHandler: undici’s callbacks in the orders undici may call them', () => {
  // A scripted undici under the paced path: each attempt connects at once or a turn later, then
  // fails before a head, or answers 200/429/503 (some with Retry-After) and ends with data and
  // onComplete or onError; the caller may abort at any step, and may ask for a pause. Whatever
  // the order, the caller is settled exactly once and the limiter ends with no slot taken and
  // nothing queued. (Before 1f59d54, 11 of these 120 runs kept an in-flight slot.)
  it('settles the caller once and leaves no slot taken, over 120 seeded runs', async () => {
    const failures: string[] = []
    for (let seed = 1; seed <= 120; seed++) {
      const random = seeded(seed)
      const pacing = createPacing({
        strategy: none(),
        giveUp: random() < 0.3 ? 'response' : undefined,
        maxRetryAfterMs: 5_000,
        retryBudget: 3,
        errorBackoffBaseMs: 1,
        errorBackoffMaxMs: 2,
      })
      const attempts: { handler: CallerHandler; head: boolean; done: boolean }[] = []
      const connect = (attempt: (typeof attempts)[number]) =>
        attempt.handler.onConnect!((reason) => {
          if (attempt.done) return
          attempt.done = true
          // undici reports its abort as the attempt's error.
          queueMicrotask(() => attempt.handler.onError!(reason ?? new Error('aborted')))
        }, {})
      const paced = pacing.pace((_opts, handler) => {
        const attempt = { handler: handler as CallerHandler, head: false, done: false }
        attempts.push(attempt)
        if (random() < 0.8) connect(attempt)
        else setImmediate(() => connect(attempt))
        return true
      })
      let settled = 0
      let abort: ((reason?: Error) => void) | undefined
      const caller: CallerHandler = {
        onConnect: (abortWith) => void (abort = abortWith),
        onHeaders: () => random() < 0.9,
        onData: () => true,
        onComplete: () => void settled++,
        onError: () => void settled++,
      }
      paced({ origin: 'http://fuzz.test', path: '/', method: random() < 0.5 ? 'GET' : 'POST' }, caller as Dispatcher.DispatchHandler)
      const abortAt = random() < 0.3 ? Math.floor(random() * 6) : -1
      for (let step = 0; step < 300 && !(settled > 0 && attempts.every((attempt) => attempt.done)); step++) {
        await tick()
        if (step === abortAt) abort?.(new Error('caller abort'))
        for (const attempt of attempts.filter((candidate) => !candidate.done)) {
          const roll = random()
          const handler = attempt.handler
          if (!attempt.head) {
            if (roll < 0.15) {
              attempt.done = true
              handler.onError!(new Error('reset'))
              continue
            }
            attempt.head = true
            const status = [200, 429, 503, 429][Math.floor(random() * 4)]!
            const raw = status === 429 && random() < 0.3 ? [Buffer.from('retry-after'), Buffer.from(random() < 0.5 ? '0' : '9')] : []
            handler.onHeaders!(status, raw, () => {}, '')
          } else if (roll < 0.4) handler.onData!(Buffer.from('z'))
          else {
            attempt.done = true
            if (roll < 0.85) handler.onComplete!([])
            else handler.onError!(new Error('reset mid-body'))
          }
        }
      }
      // The last report reaches the limiter a turn after undici's last callback.
      for (let wait = 0; wait < 20 && (pacing.limiter.stats()[0]?.inFlight ?? 0) > 0; wait++) await tick()
      const lane = pacing.limiter.stats()[0]
      if (settled !== 1 || lane?.inFlight !== 0 || lane?.queued !== 0) {
        failures.push(`seed ${seed}: settled ${settled}, inFlight ${lane?.inFlight}, queued ${lane?.queued}`)
      }
      await pacing.close()
    }
    expect(failures).toEqual([])
  })
})
