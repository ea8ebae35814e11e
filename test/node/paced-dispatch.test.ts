import { Agent, request, type Dispatcher } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { none } from '../../src/core/pacers/index.js'
import { politeInterceptor } from '../../src/node/index.js'
import { createPacing } from '../../src/node/pacing.js'
import { speaksCallbacks, type CallerHandler } from '../../src/node/paced-dispatch.js'
import { startScriptedServer, type Reply } from './scripted-server.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function setup(script: (n: number) => Reply) {
  const server = await startScriptedServer(script)
  const interceptor = politeInterceptor({ strategy: none() })
  const agent = new Agent()
  cleanups.push(() => server.close(), () => agent.close(), () => interceptor.limiter.close())
  return { server, dispatcher: agent.compose(interceptor), limiter: interceptor.limiter }
}

interface Seen {
  events: string[]
  headers?: Record<string, unknown>
  rawHeaders?: unknown
  body: string
  error?: Error
  done: Promise<void>
}

/** A handler that speaks only undici's controller API (as interceptors composed above ours do). */
function controllerHandler(options: { pauseEveryChunk?: boolean; onStart?: (controller: Dispatcher.DispatchController) => void } = {}) {
  let finish!: () => void
  const seen: Seen = { events: [], body: '', done: new Promise<void>((resolve) => (finish = resolve)) }
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(controller) {
      seen.events.push('start')
      options.onStart?.(controller)
    },
    onResponseStart(controller, statusCode, headers) {
      seen.events.push(`head ${statusCode}`)
      seen.headers = headers
      seen.rawHeaders = controller.rawHeaders
    },
    onResponseData(controller, chunk) {
      seen.body += chunk.toString()
      if (options.pauseEveryChunk) {
        controller.pause()
        setImmediate(() => controller.resume())
      }
    },
    onResponseEnd() {
      seen.events.push('end')
      finish()
    },
    onResponseError(_controller, error) {
      seen.events.push('error')
      seen.error = error
      finish()
    },
  }
  return { handler, seen }
}

describe('PacedDispatch with a controller-API handler', () => {
  it('hands over a healthy response with the parsed header record and the raw headers', async () => {
    const { server, dispatcher } = await setup(() => ({ status: 200, headers: { 'X-Test': 'yes' }, body: 'hello' }))
    const { handler, seen } = controllerHandler()
    dispatcher.dispatch({ origin: server.url, path: '/a', method: 'GET' }, handler)
    await seen.done
    expect(seen.events).toEqual(['start', 'head 200', 'end'])
    expect(seen.headers?.['x-test']).toBe('yes')
    expect(Array.isArray(seen.rawHeaders) && (seen.rawHeaders as unknown[]).every((item) => Buffer.isBuffer(item))).toBe(true)
    expect(seen.body).toBe('hello')
  })

  it('sees only the final response of a retried 429', async () => {
    const { server, dispatcher, limiter } = await setup((n) => (n === 1 ? { status: 429, body: 'no' } : { status: 200, body: `ok ${n}` }))
    const { handler, seen } = controllerHandler()
    dispatcher.dispatch({ origin: server.url, path: '/', method: 'GET' }, handler)
    await seen.done
    expect(seen.events).toEqual(['start', 'head 200', 'end'])
    expect(seen.body).toBe('ok 2')
    expect(limiter.stats()).toMatchObject([{ attempts: 2, throttled: 1, retries: 1 }])
  })

  it('pause() and resume() hold and release a large body', async () => {
    const big = 'z'.repeat(500_000)
    const { server, dispatcher } = await setup(() => ({ status: 200, body: big }))
    const { handler, seen } = controllerHandler({ pauseEveryChunk: true })
    dispatcher.dispatch({ origin: server.url, path: '/', method: 'GET' }, handler)
    await seen.done
    expect(seen.events).toEqual(['start', 'head 200', 'end'])
    expect(seen.body).toBe(big)
  })

  it('abort() through the controller during the lane wait ends the dispatch unsent', async () => {
    const { server, dispatcher, limiter } = await setup((n) =>
      n === 1 ? { status: 429, headers: { 'retry-after-ms': '5000' } } : { status: 200 },
    )
    // The first request's 429 gates the lane for 5 s; that request waits for its retry.
    const first = controllerHandler()
    dispatcher.dispatch({ origin: server.url, path: '/', method: 'GET' }, first.handler)
    for (let i = 0; i < 400 && limiter.stats()[0]?.throttled !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 5))
    let controller!: Dispatcher.DispatchController
    const { handler, seen } = controllerHandler({ onStart: (c) => (controller = c) })
    dispatcher.dispatch({ origin: server.url, path: '/', method: 'GET' }, handler)
    expect(limiter.stats()[0]?.queued).toBe(2)
    controller.abort(new Error('caller gave up'))
    await seen.done
    expect(seen.events).toEqual(['start', 'error'])
    expect(seen.error?.message).toBe('caller gave up')
    expect(server.received).toHaveLength(1)
  })
})

describe('PacedDispatch with a callback-API handler', () => {
  it('passes undici’s raw headers and callbacks straight through', async () => {
    const { server, dispatcher } = await setup(() => ({ status: 200, headers: { 'X-Test': 'raw' }, body: 'hi' }))
    const events: string[] = []
    let rawHeaders: unknown[] = []
    await new Promise<void>((resolve, reject) => {
      const handler: CallerHandler = {
        onConnect: () => events.push('connect'),
        onHeaders(statusCode, raw) {
          events.push(`head ${statusCode}`)
          rawHeaders = raw as unknown[]
          return true
        },
        onData: (chunk) => events.push(`data ${chunk.toString()}`) > 0,
        onComplete: () => {
          events.push('complete')
          resolve()
        },
        onError: reject,
      }
      dispatcher.dispatch({ origin: server.url, path: '/', method: 'GET' }, handler as Dispatcher.DispatchHandler)
    })
    expect(events).toEqual(['connect', 'head 200', 'data hi', 'complete'])
    const names = rawHeaders.filter((_, i) => i % 2 === 0).map((name) => String(name).toLowerCase())
    expect(names).toContain('x-test')
    expect(rawHeaders.every((item) => Buffer.isBuffer(item))).toBe(true)
  })
})

describe('speaksCallbacks', () => {
  it('speaks callbacks to callback-only handlers and to undici’s WrapHandler, the controller API to the rest', async () => {
    const legacy: CallerHandler = { onHeaders: () => true, onError: () => {} }
    const modern: CallerHandler = { onRequestStart: () => {}, onResponseError: () => {} }
    const both: CallerHandler = { onRequestStart: () => {}, onHeaders: () => true }
    expect(speaksCallbacks(legacy)).toBe(true)
    expect(speaksCallbacks(modern)).toBe(false)
    expect(speaksCallbacks(both)).toBe(false)
    // What compose hands an interceptor for a callback-style caller (request, fetch):
    let received: CallerHandler | undefined
    const base = new Agent()
    cleanups.push(() => base.close())
    const probe = base.compose((_dispatch) => (_opts, handler) => {
      received = handler as CallerHandler
      return true
    })
    probe.dispatch({ origin: 'http://127.0.0.1:9', path: '/', method: 'GET' }, legacy as Dispatcher.DispatchHandler)
    expect(received?.constructor.name).toBe('WrapHandler')
    expect(speaksCallbacks(received!)).toBe(true)
  })
})

/** An undici dispatch the test answers by hand: each attempt's handler, and the aborts undici received. */
function scriptedDispatch() {
  const attempts: { handler: CallerHandler; aborts: Error[] }[] = []
  const dispatch: Dispatcher.Dispatch = (_opts, handler) => {
    const attempt = { handler: handler as CallerHandler, aborts: [] as Error[] }
    attempts.push(attempt)
    attempt.handler.onConnect?.((reason) => void attempt.aborts.push(reason ?? new Error('aborted')), {})
    return true
  }
  return { attempts, dispatch }
}

/** A callback-API caller that records what it is told. */
function recordingCaller(onHeaders?: () => void) {
  const events: string[] = []
  let abort!: (reason?: Error) => void
  const handler: CallerHandler = {
    onConnect: (abortWith) => void (abort = abortWith),
    onHeaders(statusCode) {
      events.push(`head ${statusCode}`)
      onHeaders?.()
      return true
    },
    onData: (chunk) => events.push(`data ${chunk.toString()}`) > 0,
    onComplete: () => void events.push('complete'),
    onError: (error) => void events.push(`error ${error.message}`),
  }
  return { events, handler, abort: (reason?: Error) => abort(reason) }
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 1))
  expect(condition()).toBe(true)
}

function pacedOver(dispatch: Dispatcher.Dispatch) {
  const pacing = createPacing({ strategy: none() })
  cleanups.push(() => pacing.close())
  return pacing.pace(dispatch)
}

describe('PacedDispatch under undici: late, throwing and aborted attempts', () => {
  const opts: Dispatcher.DispatchOptions = { origin: 'http://127.0.0.1:9', path: '/', method: 'GET' }

  it('never lets a retried first attempt’s late body reach the caller', async () => {
    const { attempts, dispatch } = scriptedDispatch()
    const caller = recordingCaller()
    pacedOver(dispatch)(opts, caller.handler as Dispatcher.DispatchHandler)
    await until(() => attempts.length === 1)
    // A 429 whose body has not come yet: held, then retried.
    expect(attempts[0]!.handler.onHeaders!(429, [], () => {}, 'Too Many Requests')).toBe(false)
    await until(() => attempts.length === 2)
    attempts[1]!.handler.onHeaders!(200, [], () => {}, 'OK')
    attempts[1]!.handler.onData!(Buffer.from('fresh'))
    // The first attempt's body and end arrive only now: drained, not shown.
    expect(attempts[0]!.handler.onData!(Buffer.from('stale'))).toBe(true)
    attempts[0]!.handler.onComplete!(null)
    attempts[1]!.handler.onComplete!(null)
    expect(caller.events).toEqual(['head 200', 'data fresh', 'complete'])
  })

  it('fails the request through undici when the caller’s onHeaders throws', async () => {
    const { attempts, dispatch } = scriptedDispatch()
    const caller = recordingCaller(() => {
      throw new Error('caller choked')
    })
    pacedOver(dispatch)(opts, caller.handler as Dispatcher.DispatchHandler)
    await until(() => attempts.length === 1)
    attempts[0]!.handler.onHeaders!(200, [], () => {}, 'OK')
    expect(attempts[0]!.aborts.map((error) => error.message)).toEqual(['caller choked'])
    // undici then reports the abort it was asked for: the caller is settled once only.
    attempts[0]!.handler.onError!(attempts[0]!.aborts[0]!)
    expect(caller.events).toEqual(['head 200', 'error caller choked'])
  })

  it('after delivery, the caller’s abort goes to undici, which settles the caller', async () => {
    const { attempts, dispatch } = scriptedDispatch()
    const caller = recordingCaller()
    pacedOver(dispatch)(opts, caller.handler as Dispatcher.DispatchHandler)
    await until(() => attempts.length === 1)
    attempts[0]!.handler.onHeaders!(200, [], () => {}, 'OK')
    caller.abort(new Error('enough'))
    expect(attempts[0]!.aborts.map((error) => error.message)).toEqual(['enough'])
    attempts[0]!.handler.onError!(attempts[0]!.aborts[0]!)
    expect(caller.events).toEqual(['head 200', 'error enough'])
  })

  it('an abort before undici’s onConnect reaches undici when it connects', async () => {
    const held: { handler: CallerHandler }[] = []
    const caller = recordingCaller()
    const dispatch: Dispatcher.Dispatch = (_opts, handler) => {
      // No onConnect yet: undici has not taken the request up.
      held.push({ handler: handler as CallerHandler })
      return true
    }
    pacedOver(dispatch)(opts, caller.handler as Dispatcher.DispatchHandler)
    await until(() => held.length === 1)
    caller.abort(new Error('early'))
    const aborts: string[] = []
    held[0]!.handler.onConnect!((reason) => void aborts.push(reason?.message ?? ''), {})
    expect(aborts).toEqual(['early'])
    expect(caller.events).toEqual(['error early'])
  })
})

describe('PacedDispatch over a dispatcher that was closed or destroyed', () => {
  // `new Agent().compose(polite)` then `close()`: the Agent is closed, the limiter still
  // holds queued calls. Their attempts can only ever fail: the caller gets undici's error
  // at once instead of retries until the deadline (53 s and a DeadlineError before).
  it.each(['close', 'destroy'] as const)('a GET queued when the Agent underneath is closed (%s) fails at once with undici’s error', async (how) => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const server = await startScriptedServer(() => ({ status: 200, body: 'ok', holdUntil: held }))
    const interceptor = politeInterceptor({ strategy: none(), maxInFlight: 1, deadlineMs: 3_000 })
    const giveUps: string[] = []
    interceptor.limiter.on('give-up', (event) => giveUps.push(event.reason))
    const agent = new Agent()
    const dispatcher = agent.compose(interceptor)
    cleanups.push(() => server.close(), () => interceptor.close())
    const outcome = (path: string) =>
      request(`${server.url}${path}`, { dispatcher }).then(
        async (res) => `${res.statusCode} ${await res.body.text()}`,
        (error: Error) => error.name,
      )
    const first = outcome('/first')
    const queued = outcome('/queued')
    await until(() => server.received.length === 1)
    const closing = how === 'close' ? agent.close() : agent.destroy()
    release()
    expect(await queued).toBe(how === 'close' ? 'ClientClosedError' : 'ClientDestroyedError')
    // Closing lets the request in flight finish; destroying fails it the same way.
    expect(await first).toBe(how === 'close' ? '200 ok' : 'ClientDestroyedError')
    await closing
    expect(interceptor.limiter.stats()).toMatchObject([{ attempts: 2, retries: 0, inFlight: 0 }])
    expect(giveUps).toEqual(how === 'close' ? ['closed'] : ['closed', 'closed'])
  })
})
