// AATB through createClient: a 429 from the API makes the client report to a real
// telemetry endpoint (serve() on 127.0.0.1), and the endpoint's aggregate reflects it.
// A dead endpoint changes nothing for the caller: requests still settle.
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create-client.js'
import { atb } from '../../src/core/pacers/atb.js'
import { aatb } from '../../src/client/telemetry-strategies.js'
import { serve, type RunningServer } from '../../src/server/serve.js'
import { startLocalServer, type LocalServer } from '../helpers/local-server.js'
import { startClientTelemetry } from '../../src/client/client-telemetry.js'
import type { Limiter } from '../../src/client/create-limiter.js'
import { TelemetryError } from '../../src/telemetry/telemetry-error.js'

let api: LocalServer | undefined
let telemetry: RunningServer | undefined

afterEach(async () => {
  await api?.close()
  await telemetry?.close()
  api = undefined
  telemetry = undefined
})

async function waitFor(condition: () => Promise<boolean>, limitMs = 5_000): Promise<void> {
  const until = Date.now() + limitMs
  while (Date.now() < until) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error('condition not met in time')
}

describe('createClient({ telemetry })', () => {
  it('needs a strategy that carries telemetry: a clear error, before anything is started', () => {
    expect(() => createClient({ telemetry: { url: 'http://127.0.0.1:1/v1/report' } })).toThrow(/needs `strategy: aatb\(\)`.*atb by default/)
    expect(() => createClient({ strategy: atb(), telemetry: { url: 'http://127.0.0.1:1/v1/report' } })).toThrow(/strategy: `atb`/)
  })

  it('reports a 429 to the telemetry endpoint, which aggregates it for the scope', async () => {
    api = await startLocalServer()
    telemetry = await serve({ port: 0, options: { auth: false } })
    api.reply({ status: 429, headers: { 'retry-after-ms': '20' } })
    const client = createClient({ strategy: aatb(), telemetry: { url: `${telemetry.url}/v1/report`, clientId: 'tab-1' } })
    // The retry's timing is the pacer's business; what matters here is the report.
    const call = client.fetch(`${api.origin}/items`).catch((error: unknown) => error)
    const scope = api.origin
    await waitFor(async () => {
      const reply = await fetch(`${telemetry!.url}/v1/aggregate?scope=${encodeURIComponent(scope)}`)
      if (!reply.ok) return false
      const body = (await reply.json()) as { throttledReports?: number; totalAttempts?: number }
      return (body.throttledReports ?? 0) >= 1
    })
    await client.close()
    await call
  })

  it('keeps serving when the telemetry endpoint is down', async () => {
    api = await startLocalServer()
    api.reply({ status: 429, headers: { 'retry-after-ms': '20' } })
    const client = createClient({
      strategy: aatb(),
      deadlineMs: 1_000,
      telemetry: { url: 'http://127.0.0.1:9/v1/report', timeoutMs: 200 },
    })
    const first = await client.fetch(`${api.origin}/a`).then(
      (response) => response.status,
      (error: unknown) => (error as Error).name,
    )
    // Settles either way: the retry's 200, or a deadline error naming when to come back.
    expect([200, 'DeadlineError']).toContain(first)
    const second = await client.fetch(`${api.origin}/b`).then(
      (response) => response.status,
      (error: unknown) => (error as Error).name,
    )
    expect([200, 'DeadlineError']).toContain(second)
    await client.close()
  })
})

describe('startClientTelemetry: an endpoint that refuses the client', () => {
  it('says so once through telemetry.onError (a wrong token: 401), not on every report, and again after a success', async () => {
    let now = 1_700_000_000_000
    telemetry = await serve({ port: 0, options: { auth: { tokens: { right: { tenant: 'acme', scopes: '*' } } }, now: () => now } })
    const pacer = aatb().create({ now, random: () => 0.5 })
    const limiter = { lanes: () => [{ scope: 'https://api.example', pacer, backlog: 1 }], on: () => () => {} } as unknown as Limiter
    const errors: TelemetryError[] = []
    let token = 'wrong'
    const driver = startClientTelemetry({ url: telemetry.url, token: 'wrong', clientId: 'tab-1', onError: (error) => errors.push(error) }, limiter, () => now, (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set('authorization', `Bearer ${token}`) // lets the test put the token right later
      return fetch(input, { ...init, headers })
    })
    try {
      for (let report = 0; report < 5; report++) {
        pacer.onSend(now, 1)
        pacer.onResult(now, { kind: 'throttled', status: 429 }) // a report is due at once
        await driver.tick()
        now += 1_000
      }
      expect(driver.stats()).toEqual({ sent: 5, failed: 5 })
      expect(errors).toHaveLength(1) // before: no way to learn of it at all
      expect(errors[0]).toBeInstanceOf(TelemetryError)
      expect(errors[0]).toMatchObject({ name: 'TelemetryError', reason: 'unauthorized', status: 401 })
      expect(errors[0]!.message).toMatch(/401/)
      token = 'right'
      pacer.onSend(now, 1)
      pacer.onResult(now, { kind: 'throttled', status: 429 })
      await driver.tick()
      expect(driver.stats()).toEqual({ sent: 6, failed: 5 })
      token = 'wrong'
      now += 1_000
      pacer.onSend(now, 1)
      pacer.onResult(now, { kind: 'throttled', status: 429 })
      await driver.tick()
      expect(errors).toHaveLength(2) // refused again after it had worked: said again
    } finally {
      driver.stop()
    }
  })
})

describe('startClientTelemetry: a token granted some of the lanes\' scopes', () => {
  it('tells the 403 of the scope it may not report on once, though the other scope\'s reports succeed in between', async () => {
    let now = 1_700_000_000_000
    telemetry = await serve({ port: 0, options: { auth: { tokens: { k3y: { tenant: 'acme', scopes: ['https://a.example'] } } }, now: () => now } })
    const lanes = ['https://a.example', 'https://b.example'].map((scope) => ({ scope, pacer: aatb().create({ now, random: () => 0.5 }), backlog: 1 }))
    const limiter = { lanes: () => lanes, on: () => () => {} } as unknown as Limiter
    const errors: TelemetryError[] = []
    const driver = startClientTelemetry({ url: telemetry.url, token: 'k3y', clientId: 'tab-1', onError: (error) => errors.push(error) }, limiter, () => now, fetch)
    try {
      for (let round = 0; round < 5; round++) {
        for (const { pacer } of lanes) {
          pacer.onSend(now, 1)
          pacer.onResult(now, { kind: 'throttled', status: 429 })
        }
        await driver.tick()
        now += 1_000
      }
      expect(driver.stats()).toEqual({ sent: 10, failed: 5 })
      expect(errors.map((error) => `${error.reason} ${error.scope}`)).toEqual(['forbidden https://b.example']) // before: 5, one a round
    } finally {
      driver.stop()
    }
  })
})

describe('startClientTelemetry: the endpoint rate-limits the client', () => {
  it('tells a 429 rate_limited once for the client, not once per lane', async () => {
    const now = 1_700_000_000_000
    const lanes = Array.from({ length: 5 }, (_, i) => ({ scope: `https://api${i}.example`, pacer: aatb().create({ now, random: () => 0.5 }), backlog: 1 }))
    const limiter = { lanes: () => lanes, on: () => () => {} } as unknown as Limiter
    const errors: TelemetryError[] = []
    const limited = async (): Promise<Response> => new Response(JSON.stringify({ error: 'rate_limited', message: 'too many reports; slow down' }), { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' } })
    const driver = startClientTelemetry({ url: 'http://127.0.0.1:9', clientId: 'tab-1', onError: (error) => errors.push(error) }, limiter, () => now, limited)
    try {
      for (const { pacer } of lanes) { pacer.onSend(now, 1); pacer.onResult(now, { kind: 'throttled', status: 429 }) }
      await driver.tick()
      expect(driver.stats()).toEqual({ sent: 5, failed: 5 })
      expect(errors.map((error) => `${error.reason} ${error.code}`)).toEqual(['rate-limited rate_limited'])
    } finally {
      driver.stop()
    }
  })
})

describe('createClient({ telemetry: { onError } })', () => {
  it('passes a wrong token\'s 401 from a real endpoint to onError, and close() leaves nothing behind', async () => {
    api = await startLocalServer()
    telemetry = await serve({ port: 0, options: { auth: { tokens: { right: { tenant: 'acme', scopes: '*' } } } } })
    api.reply({ status: 429, headers: { 'retry-after-ms': '20' } })
    const errors: TelemetryError[] = []
    const client = createClient({ strategy: aatb(), deadlineMs: 1_000, telemetry: { url: telemetry.url, token: 'wrong', onError: (error) => errors.push(error) } })
    const call = client.fetch(`${api.origin}/items`).catch((error: unknown) => error)
    await waitFor(async () => errors.length > 0)
    await client.close()
    await call
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ reason: 'unauthorized', status: 401, code: 'unauthorized', scope: api.origin })
  })
})
