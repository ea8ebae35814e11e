import { describe, expect, it } from 'vitest'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTelemetryLink } from '../../src/telemetry/telemetry-link.js'
import type { LinkTimer } from '../../src/telemetry/telemetry-link.js'
import type { TelemetryError } from '../../src/telemetry/telemetry-error.js'
import { serve } from '../../src/server/serve.js'

const report = { scope: 'api', clientId: 'c1', attempts: 3, throttled: 1 }
const goodReply = { v: 1, scope: 'api', activeClients: 2, totalAttempts: 9, throttledReports: 1, windowMs: 30000, quotaPerSecond: 2, fairSharePerSecond: 1 }

/** A timer that fires only when told to: "10 s pass" without waiting. */
function manualTimer(): LinkTimer & { fireAll(): void; pending(): number } {
  const callbacks = new Map<number, () => void>()
  let next = 0
  return {
    set: (callback) => { callbacks.set(++next, callback); return next },
    clear: (handle) => { callbacks.delete(handle as number) },
    fireAll: () => { for (const [id, callback] of callbacks) { callbacks.delete(id); callback() } },
    pending: () => callbacks.size,
  }
}

const respond = (body: unknown, status = 200): typeof fetch =>
  async () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

describe('createTelemetryLink', () => {
  it('posts the versioned report with keepalive and the bearer token, and returns the aggregate', async () => {
    let seen: { url: string; init: RequestInit } | undefined
    const link = createTelemetryLink({
      url: 'https://telemetry.example',
      token: 't0k',
      fetch: async (url, init) => { seen = { url: String(url), init: init! }; return respond(goodReply)(url, init) },
    })
    expect(await link.report(report)).toEqual({ activeClients: 2, totalAttempts: 9, throttledReports: 1, windowMs: 30000, quotaPerSecond: 2, fairSharePerSecond: 1 })
    expect(seen!.url).toBe('https://telemetry.example/v1/report')
    expect(seen!.init.keepalive).toBe(true)
    expect(seen!.init.method).toBe('POST')
    expect((seen!.init.headers as Record<string, string>).authorization).toBe('Bearer t0k')
    expect(JSON.parse(String(seen!.init.body))).toEqual({ v: 1, ...report })
  })

  it('fails open: endpoint down', async () => {
    const link = createTelemetryLink({ url: 'http://x', fetch: async () => { throw new TypeError('fetch failed') } })
    expect(await link.report(report)).toBeUndefined()
  })

  it('fails open: a reply slower than the timeout (10 s) resolves undefined and aborts the fetch', async () => {
    const timer = manualTimer()
    let aborted = false
    const link = createTelemetryLink({
      url: 'http://x',
      timer,
      fetch: (_url, init) => new Promise((resolve) => {
        init!.signal!.addEventListener('abort', () => { aborted = true })
        void resolve // never answers by itself: the server takes "10 s"
      }),
    })
    const pending = link.report(report)
    expect(timer.pending()).toBe(1)
    timer.fireAll() // the 3 s timeout passes
    expect(await pending).toBeUndefined()
    expect(aborted).toBe(true)
  })

  it.each([
    ['an html page', '<html>oops</html>', 200],
    ['a JSON reply that does not validate', { ...goodReply, activeClients: -1 }, 200],
    ['a reply for another scope', { ...goodReply, scope: 'other' }, 200],
    ['a 500', { error: 'x' }, 500],
    ['a 429', { error: 'rate_limited' }, 429],
  ])('fails open: %s', async (_name, body, status) => {
    const link = createTelemetryLink({ url: 'http://x', fetch: respond(body, status) })
    expect(await link.report(report)).toBeUndefined()
  })

  it('does not send a report that would not validate', async () => {
    let calls = 0
    const link = createTelemetryLink({ url: 'http://x', fetch: async () => { calls++; return respond(goodReply)('') } })
    expect(await link.report({ ...report, attempts: -1 })).toBeUndefined()
    expect(calls).toBe(0)
  })

  it('reaches the real server through a report URL written with a trailing slash', async () => {
    const server = await serve({ port: 0, options: { auth: false } })
    try {
      expect(await createTelemetryLink({ url: `${server.url}/v1/report/` }).report(report)).toMatchObject({ totalAttempts: 3 }) // before: 404, every report
    } finally {
      await server.close()
    }
  })

  it('talks to the real server over 127.0.0.1, and fails open once it is gone', async () => {
    const server = await serve({ port: 0, options: { quotas: { api: { perMinute: 60 } } } })
    const link = createTelemetryLink({ url: server.url })
    expect(await link.report(report)).toMatchObject({ activeClients: 1, totalAttempts: 3, throttledReports: 1, quotaPerSecond: 1 })
    await server.close()
    expect(await link.report(report)).toBeUndefined()
  })
})

describe('createTelemetryLink: lanes whose scope or quota hint is not wire-ready', () => {
  it('reports a route-split lane (its scope has a space: `origin#~route:POST /products`) under a visible-ASCII wire scope', async () => {
    const server = await serve({ port: 0, options: { auth: false } })
    try {
      const link = createTelemetryLink({ url: server.url })
      const scope = 'https://api.example#~route:POST /products'
      expect(await link.report({ ...report, scope })).toMatchObject({ activeClients: 1, totalAttempts: 3, throttledReports: 1 })
      const wire = await fetch(`${server.url}/v1/aggregate?scope=${encodeURIComponent('https://api.example#~route:POST%20/products')}`)
      expect(await wire.json()).toMatchObject({ totalAttempts: 3 })
      // Non-ASCII (a scope() function's name) and an over-long scope are reported too, each under its own name.
      expect(await link.report({ ...report, scope: 'tënant-api' })).toMatchObject({ totalAttempts: 3 })
      const long = `https://api.example#~route:GET /${'segment/'.repeat(40)}`
      expect(await link.report({ ...report, scope: long })).toMatchObject({ totalAttempts: 3 })
      expect(await link.report({ ...report, scope: `${long}x` })).toMatchObject({ totalAttempts: 3 }) // not the same aggregate
    } finally {
      await server.close()
    }
  })

  it('still reports the counts when the quota hint is outside the protocol (a yearly quota, 10^10 tokens a day), without the hint', async () => {
    const server = await serve({ port: 0, options: { auth: false } })
    try {
      const link = createTelemetryLink({ url: server.url })
      const yearly = { quota: 1_000, windowMs: 365 * 86_400_000 }
      expect(await link.report({ ...report, quota: yearly })).toMatchObject({ activeClients: 1, totalAttempts: 3 })
      expect(await link.report({ ...report, quota: { quota: 1e10, windowMs: 86_400_000 } })).toMatchObject({ totalAttempts: 6 })
    } finally {
      await server.close()
    }
  })
})

describe('createTelemetryLink against a hostile endpoint (raw node:http on 127.0.0.1)', () => {
  it('reads at most a small reply: a 200 that streams 64 MiB of JSON-looking bytes is cut, not buffered', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20) // spaces: valid JSON whitespace, so only the size gives it away
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"v":1,"scope":"api"')
      let left = 1024 // 64 MiB in all
      const pump = (): void => {
        while (left > 0) {
          left--
          if (!response.write(chunk)) return void response.once('drain', pump)
        }
        response.end('}')
      }
      response.on('error', () => {})
      pump()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      let read = 0
      // Counts what the link pulls out of the reply's body.
      const counting: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        const body = response.body!.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform(part, controller) { read += part.byteLength; controller.enqueue(part) } }))
        return new Response(body, { status: response.status, headers: response.headers })
      }
      const link = createTelemetryLink({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, fetch: counting, timeoutMs: 60_000 })
      expect(await link.report(report)).toBeUndefined()
      expect(read).toBeLessThan(1024 * 1024) // before: 67,108,885 bytes read and parsed
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('createTelemetryLink: onFailure names why a report came back empty', () => {
  it.each([
    ['unauthorized', 401, respond({ error: 'unauthorized', message: 'unknown bearer token' }, 401), /401 unauthorized \(unknown bearer token\)/],
    ['forbidden', 403, respond({ error: 'scope_forbidden' }, 403), /403/],
    ['rate-limited', 429, respond({ error: 'rate_limited' }, 429), /429/],
    ['rejected', 404, respond('<html>nope</html>', 404), /404/],
    ['unavailable', 503, respond({ error: 'store_unavailable' }, 503), /503/],
    ['invalid-reply', 200, respond('<html>oops</html>'), /no valid aggregate/],
    ['invalid-reply', 200, respond({ ...goodReply, scope: 'other' }), /for scope other/],
    ['network', 0, (async () => { throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }) }) as typeof fetch, /ECONNREFUSED/],
  ] as const)('%s (%i)', async (reason, status, fetch, message) => {
    const failures: TelemetryError[] = []
    const link = createTelemetryLink({ url: 'http://x', fetch, onFailure: (error) => failures.push(error) })
    expect(await link.report(report)).toBeUndefined()
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatchObject({ reason, status, scope: 'api' })
    expect(failures[0]!.message).toMatch(message)
  })

  it('timeout, once; and nothing for a report the caller ended', async () => {
    const timer = manualTimer()
    const failures: TelemetryError[] = []
    const link = createTelemetryLink({ url: 'http://x', timer, fetch: () => new Promise(() => {}), onFailure: (error) => failures.push(error) })
    const pending = link.report(report)
    timer.fireAll()
    expect(await pending).toBeUndefined()
    expect(failures.map((f) => f.reason)).toEqual(['timeout'])
    const stop = new AbortController()
    const ended = link.report(report, stop.signal)
    stop.abort()
    expect(await ended).toBeUndefined()
    expect(timer.pending()).toBe(0)
    expect(failures).toHaveLength(1)
  })
})

describe('createTelemetryLink: client ids and URLs as users give them', () => {
  it('reports under a client id that is not visible ASCII (`tab 1`, `Küche`, 200 characters) instead of never', async () => {
    const server = await serve({ port: 0, options: { auth: false } })
    try {
      const link = createTelemetryLink({ url: server.url })
      for (const [i, clientId] of ['tab 1', 'Küche', 'x'.repeat(200)].entries()) {
        expect(await link.report({ ...report, scope: `s-${i}`, clientId })).toMatchObject({ activeClients: 1 })
      }
    } finally {
      await server.close()
    }
  })

  it.each([
    ['https://t.example', 'https://t.example/v1/report'],
    ['https://t.example/telemetry/', 'https://t.example/telemetry/v1/report'],
    ['https://t.example/v1/report', 'https://t.example/v1/report'],
    ['https://t.example/base?tenant=x', 'https://t.example/base/v1/report?tenant=x'],
    ['/telemetry', 'https://app.example/telemetry/v1/report'], // in a page: relative to it, as fetch reads it
    ['/v1/report', 'https://app.example/v1/report'],
    ['https://t.example/v1/report/', 'https://t.example/v1/report'], // serve() answers /v1/report/ 404
  ])('posts to the report URL of %s', async (url, expected) => {
    const location = Object.getOwnPropertyDescriptor(globalThis, 'location')
    Object.defineProperty(globalThis, 'location', { value: { href: 'https://app.example/page/index.html' }, configurable: true })
    try {
      let seen = ''
      const link = createTelemetryLink({ url, fetch: async (input) => { seen = String(input); return respond(goodReply)(input) } })
      await link.report(report)
      expect(seen).toBe(expected)
    } finally {
      if (location) Object.defineProperty(globalThis, 'location', location)
      else delete (globalThis as { location?: unknown }).location
    }
  })
})

describe('createTelemetryLink: timeoutMs as users may write it', () => {
  it.each([
    [Infinity, 2 ** 31 - 1],
    [2 ** 31, 2 ** 31 - 1],
    [-1, 3_000],
    [Number.NaN, 3_000],
    [0, 3_000],
    [250, 250],
  ])('timeoutMs %s arms a timer setTimeout honours (%i ms): beyond 2^31-1 it fires after 1 ms, failing every report', async (timeoutMs, armed) => {
    const delays: number[] = []
    const link = createTelemetryLink({ url: 'http://x', timeoutMs, timer: { set: (_callback, ms) => { delays.push(ms); return 0 }, clear: () => {} }, fetch: respond(goodReply) })
    expect(await link.report(report)).toBeDefined()
    expect(delays).toEqual([armed])
  })
})
