import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../src/server/memory-store.js'
import { StoreUnavailableError } from '../../src/server/telemetry-store.js'
import type { TelemetryStore } from '../../src/server/telemetry-store.js'
import type { TelemetryHandlerOptions } from '../../src/server/handle-telemetry.js'
import { validateReply } from '../../src/telemetry/protocol.js'
import { serve } from '../../src/server/serve.js'
import { postReportFrom, transports } from './transports.js'
import type { Endpoint } from './transports.js'

const T0 = 1_700_000_000_000
const TOKEN = 'secret-a'
const auth = { tokens: { [TOKEN]: { tenant: 'a', scopes: ['api', 'other'] }, 'secret-b': { tenant: 'b', scopes: ['b-only'] }, 'flood-token': { tenant: 'f', scopes: '*' as const } } }
const ADMIN = 'operator-secret'
const json = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }
const report = (extra: Record<string, unknown> = {}) => JSON.stringify({ v: 1, scope: 'api', clientId: 'c1', attempts: 5, throttled: 1, ...extra })

for (const transport of transports) {
  describe(`telemetry endpoint via ${transport.name}`, () => {
    let endpoint: Endpoint | undefined
    let clock = T0
    const open = async (options: TelemetryHandlerOptions = {}) => {
      clock = T0
      endpoint = await transport.open({ auth, now: () => clock, quotas: { api: { perMinute: 120 } }, ...options })
      return endpoint
    }
    afterEach(async () => {
      await endpoint?.close()
      endpoint = undefined
    })

    it('accepts a report and answers the aggregate with the fair share', async () => {
      const e = await open()
      const reply = await e.send('POST', '/v1/report', { headers: json, body: report({ backlog: 2 }) })
      expect(reply.status).toBe(200)
      expect(reply.headers.get('access-control-allow-origin')).toBe('*')
      const body = validateReply(reply.json())
      expect(body.ok).toBe(true)
      expect(reply.json()).toMatchObject({ scope: 'api', activeClients: 1, totalAttempts: 5, throttledReports: 1, quotaPerSecond: 2, fairSharePerSecond: 2 })
      const read = await e.send('GET', '/v1/aggregate?scope=api', { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(read.status).toBe(200)
      expect(read.json()).toMatchObject({ totalAttempts: 5, throttledReports: 1, fairSharePerSecond: 1 })
    })

    it.each([
      ['malformed JSON', '{"v":1,', 400, 'invalid_report'],
      ['wrong types', report({ attempts: 'many' }), 400, 'invalid_report'],
      ['negative counts', report({ attempts: -5, throttled: 0 }), 400, 'invalid_report'],
      ['huge counts', report({ attempts: 1e15 }), 400, 'invalid_report'],
      ['unknown fields', report({ pauseEveryone: true }), 400, 'invalid_report'],
      ['an empty body', '', 400, 'invalid_report'],
    ])('rejects %s with %i', async (_name, body, status, error) => {
      const e = await open()
      const reply = await e.send('POST', '/v1/report', { headers: json, body })
      expect(reply.status).toBe(status)
      expect(reply.json().error).toBe(error)
    })

    it('accepts a report with an absurd quota hint but never announces a rate no client accepts', async () => {
      const e = await open({ quotas: {} })
      const reply = await e.send('POST', '/v1/report', { headers: json, body: report({ quota: { quota: 1e9, windowMs: 5e-324 } }) })
      expect(reply.status).toBe(200)
      expect(validateReply(reply.json())).toMatchObject({ ok: true })
      const read = await e.send('GET', '/v1/aggregate?scope=api', { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(validateReply(read.json())).toMatchObject({ ok: true })
    })

    it('rejects invalid UTF-8 with 400', async () => {
      const e = await open()
      const reply = await e.send('POST', '/v1/report', { headers: json, body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) })
      expect(reply.status).toBe(400)
    })

    it('rejects a 1 MB body with 413', async () => {
      const e = await open()
      const reply = await e.send('POST', '/v1/report', { headers: json, body: 'x'.repeat(1 << 20) })
      expect(reply.status).toBe(413)
      expect(reply.json().error).toBe('body_too_large')
    })

    it('rejects a non-JSON content type with 415', async () => {
      const e = await open()
      const reply = await e.send('POST', '/v1/report', { headers: { ...json, 'content-type': 'text/plain' }, body: report() })
      expect(reply.status).toBe(415)
    })

    it('requires a known bearer token (401) allowed on the scope (403)', async () => {
      const e = await open()
      const missing = await e.send('POST', '/v1/report', { headers: { 'content-type': 'application/json' }, body: report() })
      expect(missing.status).toBe(401)
      expect(missing.headers.get('www-authenticate')).toBe('Bearer')
      const wrong = await e.send('POST', '/v1/report', { headers: { ...json, authorization: 'Bearer nope' }, body: report() })
      expect(wrong.status).toBe(401)
      const forbidden = await e.send('POST', '/v1/report', { headers: { ...json, authorization: 'Bearer secret-b' }, body: report() })
      expect(forbidden.status).toBe(403)
      const unknownScope = await e.send('POST', '/v1/report', { headers: json, body: report({ scope: 'not-granted' }) })
      expect(unknownScope.status).toBe(403)
      const read = await e.send('GET', '/v1/aggregate?scope=b-only', { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(read.status).toBe(403)
    })

    it('rate-limits a flood from one client id with 429, keeping aggregates bounded', async () => {
      const e = await open({ rateLimit: { perClientPerSecond: 1, perClientBurst: 5 } })
      const statuses: number[] = []
      for (let i = 0; i < 20; i++) {
        const reply = await e.send('POST', '/v1/report', { headers: json, body: report({ attempts: 1_000_000, throttled: 1_000_000 }) })
        statuses.push(reply.status)
        if (reply.status === 429) expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(5)
      expect(statuses.filter((s) => s === 429)).toHaveLength(15)
      const read = (await e.send('GET', '/v1/aggregate?scope=api', { headers: { authorization: `Bearer ${TOKEN}` } })).json()
      // one client, one bucket: clamped attempts, one 429 report, one active client
      expect(read).toMatchObject({ activeClients: 1, throttledReports: 1, totalAttempts: 10_000 })
      clock += 1_000
      expect((await e.send('POST', '/v1/report', { headers: json, body: report() })).status).toBe(200)
    })

    it('bounds spoofed client ids per source and per scope', async () => {
      const e = await open({
        rateLimit: { perSourcePerSecond: 1, perSourceBurst: 30 },
        store: createMemoryStore({ maxClientsPerScope: 20 }),
      })
      let accepted = 0
      for (let i = 0; i < 40; i++) {
        const reply = await e.send('POST', '/v1/report', { headers: json, body: report({ clientId: `spoof-${i}` }) })
        if (reply.status === 200) accepted++
        else expect(reply.status).toBe(429)
      }
      expect(accepted).toBe(30)
      const read = (await e.send('GET', '/v1/aggregate?scope=other', { headers: { authorization: `Bearer ${TOKEN}` } }))
      expect(read.status).toBe(429) // the source is out of requests too
      clock += 10_000
      const aggregate = (await e.send('GET', '/v1/aggregate?scope=api', { headers: { authorization: `Bearer ${TOKEN}` } })).json()
      expect(aggregate.activeClients).toBe(21) // 20 tracked + one shared overflow entry
    })

    it('answers CORS preflights', async () => {
      const e = await open()
      const reply = await e.send('OPTIONS', '/v1/report', {
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      })
      expect(reply.status).toBe(204)
      expect(reply.headers.get('access-control-allow-origin')).toBe('*')
      expect(reply.headers.get('access-control-allow-headers')).toContain('authorization')
      expect(reply.headers.get('access-control-allow-methods')).toContain('POST')
    })

    it('limits CORS to listed origins when configured', async () => {
      const e = await open({ corsOrigins: ['https://app.example'] })
      const allowed = await e.send('OPTIONS', '/v1/report', { headers: { origin: 'https://app.example' } })
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example')
      const other = await e.send('OPTIONS', '/v1/report', { headers: { origin: 'https://evil.example' } })
      expect(other.headers.get('access-control-allow-origin')).toBeNull()
    })

    it('serves /healthz, /metrics, 404 and 405', async () => {
      const e = await open()
      expect((await e.send('GET', '/healthz')).json()).toEqual({ ok: true })
      await e.send('POST', '/v1/report', { headers: json, body: report() })
      const metrics = await e.send('GET', '/metrics')
      expect(metrics.status).toBe(200)
      expect(metrics.headers.get('content-type')).toContain('text/plain')
      expect(metrics.text).toContain('polite_telemetry_requests_total{route="/v1/report",status="200"} 1')
      expect(metrics.text).toContain('polite_telemetry_reports_total 1')
      expect(metrics.text).toContain('polite_telemetry_scopes 1')
      expect((await e.send('GET', '/nope')).status).toBe(404)
      const wrongMethod = await e.send('GET', '/v1/report', { headers: json })
      expect(wrongMethod.status).toBe(405)
      expect(wrongMethod.headers.get('allow')).toBe('POST')
      expect((await e.send('GET', '/v1/aggregate', { headers: json })).status).toBe(400)
    })

    it('answers 503 when the store is unavailable, while /healthz stays 200', async () => {
      const down: TelemetryStore = {
        report: () => Promise.reject(new StoreUnavailableError('down')),
        read: () => Promise.reject(new StoreUnavailableError('down')),
      }
      const e = await open({ store: down })
      const reply = await e.send('POST', '/v1/report', { headers: json, body: report() })
      expect(reply.status).toBe(503)
      expect(reply.json().error).toBe('store_unavailable')
      expect((await e.send('GET', '/v1/aggregate?scope=api', { headers: json })).status).toBe(503)
      expect((await e.send('GET', '/healthz')).status).toBe(200)
    })

    it('keeps another tenant\'s scope intact while one token floods new scopes', async () => {
      const e = await open({ store: createMemoryStore({ maxScopes: 100 }), rateLimit: false })
      const b = { 'content-type': 'application/json', authorization: 'Bearer secret-b' }
      expect((await e.send('POST', '/v1/report', { headers: b, body: report({ scope: 'b-only', attempts: 9, throttled: 1, quota: { quota: 60, windowMs: 60_000 } }) })).status).toBe(200)
      const statuses = new Map<number, number>()
      for (let i = 0; i < 150; i++) {
        const flood = await e.send('POST', '/v1/report', { headers: { ...json, authorization: 'Bearer flood-token' }, body: report({ scope: `flood-${i}` }) })
        statuses.set(flood.status, (statuses.get(flood.status) ?? 0) + 1)
        if (i % 50 === 0) await e.send('POST', '/v1/report', { headers: b, body: report({ scope: 'b-only', clientId: `b${i}`, attempts: 1, throttled: 0 }) })
        clock += 10
      }
      expect(statuses.get(200)).toBe(100) // the flooding tenant's own cap
      expect(statuses.get(429)).toBe(50)
      const read = (await e.send('GET', '/v1/aggregate?scope=b-only', { headers: b })).json()
      expect(read).toMatchObject({ totalAttempts: 12, throttledReports: 1, activeClients: 4 })
    })

    it('refuses a quota hint one reporter sends alone: no poisoned rate for the scope', async () => {
      const e = await open({ quotas: {} })
      for (const quota of [1e-297, 1e9]) {
        const reply = await e.send('POST', '/v1/report', { headers: json, body: report({ quota: { quota, windowMs: 1000 } }) })
        expect(reply.status).toBe(200)
        expect(reply.json().quotaPerSecond).toBeUndefined()
        expect(reply.json().fairSharePerSecond).toBeUndefined()
      }
    })

    it('counts a retried report (same client and seq) once', async () => {
      const e = await open()
      for (let i = 0; i < 2; i++) expect((await e.send('POST', '/v1/report', { headers: json, body: report({ seq: 7 }) })).status).toBe(200)
      await e.send('POST', '/v1/report', { headers: json, body: report({ seq: 8, attempts: 2, throttled: 0 }) })
      expect((await e.send('GET', '/v1/aggregate?scope=api', { headers: json })).json()).toMatchObject({ totalAttempts: 7 })
      const metrics = await e.send('GET', '/metrics')
      expect(metrics.text).toContain('polite_telemetry_reports_total 2')
    })

    it('reports gauges as of the scrape, not as of the last report', async () => {
      const e = await open()
      await e.send('POST', '/v1/report', { headers: json, body: report() })
      expect((await e.send('GET', '/metrics')).text).toContain('polite_telemetry_scopes 1')
      clock += 70_000 // past the scope's time-to-live, with no report since
      expect((await e.send('GET', '/metrics')).text).toContain('polite_telemetry_scopes 0')
    })

    it('guards /metrics, the dashboard data and reads across tenants with the admin token', async () => {
      const e = await open({ adminToken: ADMIN })
      await e.send('POST', '/v1/report', { headers: json, body: report() })
      const admin = { authorization: `Bearer ${ADMIN}` }
      for (const path of ['/metrics', '/v1/fleet', '/v1/aggregate?scope=api&tenant=a']) {
        expect((await e.send('GET', path)).status, path).toBe(401)
        expect((await e.send('GET', path, { headers: json })).status, path).toBe(401) // a tenant token is not enough
        expect((await e.send('GET', path, { headers: admin })).status, path).toBe(200)
      }
      expect((await e.send('GET', '/v1/aggregate?scope=api&tenant=a', { headers: admin })).json()).toMatchObject({ totalAttempts: 5 })
      const fleet = (await e.send('GET', '/v1/fleet', { headers: admin })).json()
      expect(fleet.scopes).toMatchObject([{ tenant: 'a', scope: 'api', activeClients: 1, sources: 1 }])
      expect(fleet.scopes[0].attempts.at(-1)).toBe(5)
      // the admin token is not a tenant token
      expect((await e.send('POST', '/v1/report', { headers: { ...json, ...admin }, body: report() })).status).toBe(401)
      // a tenant's own reads stay as they were
      expect((await e.send('GET', '/v1/aggregate?scope=api', { headers: json })).status).toBe(200)
    })

    it('without an admin token keeps /metrics open but serves no cross-tenant data under auth', async () => {
      const e = await open()
      expect((await e.send('GET', '/metrics')).status).toBe(200)
      expect((await e.send('GET', '/v1/fleet')).status).toBe(403)
      expect((await e.send('GET', '/v1/aggregate?scope=b-only&tenant=b', { headers: json })).status).toBe(403)
    })

    it('refuses an admin token equal to a tenant token', async () => {
      await expect(open({ adminToken: TOKEN })).rejects.toThrow(/differ/)
    })

    it('serves the dashboard page at GET /, self-contained', async () => {
      const e = await open({ adminToken: ADMIN })
      const page = await e.send('GET', '/')
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toContain('text/html')
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
      expect(page.text).toContain('/v1/fleet')
      expect(page.text).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i) // no external asset
    })

    it('takes the source from X-Forwarded-For only when trustProxy is set', async () => {
      const limit = { perSourcePerSecond: 1, perSourceBurst: 1 }
      const via = (address: string) => ({ headers: { ...json, 'x-forwarded-for': `198.51.100.9, ${address}` }, body: report({ clientId: address }) })
      const proxied = await open({ trustProxy: true, rateLimit: limit })
      expect((await proxied.send('POST', '/v1/report', via('10.0.0.1'))).status).toBe(200)
      expect((await proxied.send('POST', '/v1/report', via('10.0.0.2'))).status).toBe(200)
      await proxied.close()
      const direct = await open({ rateLimit: limit })
      expect((await direct.send('POST', '/v1/report', via('10.0.0.1'))).status).toBe(200)
      expect((await direct.send('POST', '/v1/report', via('10.0.0.2'))).status).toBe(429) // one source: the header is ignored
    })

    it('runs open (no auth) when told to', async () => {
      const e = await open({ auth: false })
      const reply = await e.send('POST', '/v1/report', { headers: { 'content-type': 'application/json' }, body: report({ scope: 'anything' }) })
      expect(reply.status).toBe(200)
    })

    // Hostile input: each is refused with a 4xx, pollutes nothing, and a well-formed report is served after it.
    const valid = '{"v":1,"scope":"api","clientId":"c1","attempts":1,"throttled":0}'
    const withField = (field: string) => `{"v":1,"scope":"api","clientId":"c1","attempts":1,"throttled":0,${field}}`
    const servesAfter = async (e: Endpoint) => {
      const after = await e.send('POST', '/v1/report', { headers: json, body: report({ clientId: 'after' }) })
      expect(after.status).toBe(200)
      expect(validateReply(after.json()).ok).toBe(true)
    }
    it.each([
      ['__proto__ at the top', withField('"__proto__":{"polluted":true}')],
      ['constructor.prototype', withField('"constructor":{"prototype":{"polluted":true}}')],
      ['prototype', withField('"prototype":{"polluted":true}')],
      ['__proto__ in the quota', '{"v":1,"scope":"api","clientId":"c1","attempts":1,"throttled":0,"quota":{"quota":1,"windowMs":1000,"__proto__":{"polluted":true}}}'],
      ['"NaN" as a string', withField('"backlog":"NaN"').replace('"attempts":1', '"attempts":"NaN"')],
      ['"Infinity" as a string', valid.replace('"attempts":1', '"attempts":"Infinity"')],
      ['a number as a string', valid.replace('"attempts":1', '"attempts":"1"')],
      ['NaN as a bare token', valid.replace('"attempts":1', '"attempts":NaN')],
      ['1e400 (parses to Infinity)', valid.replace('"attempts":1', '"attempts":1e400')],
      ['1e308', valid.replace('"attempts":1', '"attempts":1e308')],
      ['-1', valid.replace('"attempts":1', '"attempts":-1')],
      ['a fraction', valid.replace('"attempts":1', '"attempts":1.5')],
      ['more 429s than attempts', valid.replace('"throttled":0', '"throttled":2')],
      ['backlog 1e308', withField('"backlog":1e308')],
      ['seq -1', withField('"seq":-1')],
      ['seq 2^53', withField('"seq":9007199254740992')],
      ['a quota of NaN', withField('"quota":{"quota":"NaN","windowMs":1000}')],
      ['a negative quota', withField('"quota":{"quota":-1,"windowMs":1000}')],
      ['a quota window of 1e400', withField('"quota":{"quota":1,"windowMs":1e400}')],
      ['a quota that is an array', withField('"quota":[1,1000]')],
      ['a null quota', withField('"quota":null')],
      ['v 2', valid.replace('"v":1', '"v":2')],
      ['v "1"', valid.replace('"v":1', '"v":"1"')],
      ['a top-level array', `[${valid}]`],
      ['a top-level null', 'null'],
      ['a top-level string', JSON.stringify(valid)],
      ['2,000 nested arrays', `${'['.repeat(2000)}${']'.repeat(2000)}`],
      ['nesting inside a field', withField(`"quota":{"quota":${'['.repeat(1000)}1${']'.repeat(1000)},"windowMs":1000}`)],
      ['a scope with a space', valid.replace('"scope":"api"', '"scope":"a b"')],
      ['a scope with a control character', valid.replace('"scope":"api"', '"scope":"a\\u0000b"')],
      ['a 257-character scope', valid.replace('"scope":"api"', `"scope":"${'s'.repeat(257)}"`)],
      ['a 129-character client id', valid.replace('"clientId":"c1"', `"clientId":"${'c'.repeat(129)}"`)],
      ['a non-ASCII client id', valid.replace('"clientId":"c1"', '"clientId":"c\u00e9"')],
      ['trailing garbage', `${valid}x`],
      ['two objects', `${valid}${valid}`],
    ])('refuses %s with 400 invalid_report and keeps serving', async (_name, body) => {
      const e = await open()
      const reply = await e.send('POST', '/v1/report', { headers: json, body })
      expect(reply.status).toBe(400)
      expect(reply.json().error).toBe('invalid_report')
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty('polluted')
      await servesAfter(e)
    })

    it('refuses 500,000 nested arrays under a raised body limit with 400, and keeps serving', async () => {
      const e = await open({ maxBodyBytes: 1 << 20 })
      const reply = await e.send('POST', '/v1/report', { headers: json, body: `${'['.repeat(500_000)}${']'.repeat(500_000)}` })
      expect(reply.status).toBe(400)
      await servesAfter(e)
    })

    it.each([
      ['none', undefined],
      ['text/plain', 'text/plain'],
      ['text/json', 'text/json'],
      ['application/json-patch+json', 'application/json-patch+json'],
      ['application/jsonx', 'application/jsonx'],
      ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
      ['multipart/form-data', 'multipart/form-data; boundary=x'],
    ])('refuses content type %s with 415 and keeps serving', async (_name, type) => {
      const e = await open()
      const headers: Record<string, string> = { authorization: json.authorization }
      if (type !== undefined) headers['content-type'] = type
      // A string body without a type of its own would be sent as text/plain: send bytes.
      const reply = await e.send('POST', '/v1/report', { headers, body: new TextEncoder().encode(report()) })
      expect(reply.status).toBe(415)
      expect(reply.json().error).toBe('unsupported_media_type')
      await servesAfter(e)
    })

    it('takes application/json in any case and with parameters', async () => {
      const e = await open()
      for (const type of ['Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8']) {
        expect((await e.send('POST', '/v1/report', { headers: { ...json, 'content-type': type }, body: report() })).status, type).toBe(200)
      }
    })

    it.each([
      ['PUT', '/v1/report', 405],
      ['DELETE', '/v1/report', 405],
      ['PATCH', '/v1/report', 405],
      ['POST', '/v1/aggregate?scope=api', 405],
      ['DELETE', '/v1/aggregate?scope=api', 405],
      ['POST', '/healthz', 405],
      ['POST', '/metrics', 405],
      ['POST', '/v1/fleet', 405],
      ['PUT', '/', 405],
      ['POST', '/v1/report/', 404],
      ['POST', '/V1/REPORT', 404],
      ['POST', '/v1/report%00', 404],
      ['POST', '/v1/reports', 404],
      ['GET', '/v2/report', 404],
      ['GET', '/.env', 404],
      ['GET', '/__proto__', 404],
    ])('answers %s %s with %i and keeps serving', async (method, path, status) => {
      const e = await open()
      const body = method === 'GET' || method === 'HEAD' ? undefined : report()
      const reply = await e.send(method, path, { headers: json, body })
      expect(reply.status).toBe(status)
      expect(reply.json().error).toBe(status === 405 ? 'method_not_allowed' : 'not_found')
      await servesAfter(e)
    })

    it('keeps scopes and client ids named like Object.prototype members apart, as plain names', async () => {
      const e = await open({ auth: false })
      const open_ = { 'content-type': 'application/json' }
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
        const reply = await e.send('POST', '/v1/report', { headers: open_, body: report({ scope: name, clientId: name, attempts: 3 }) })
        expect(reply.status).toBe(200)
        expect(reply.json()).toMatchObject({ scope: name, activeClients: 1, totalAttempts: 3 })
      }
      const read = await e.send('GET', '/v1/aggregate?scope=__proto__')
      expect(read.json()).toMatchObject({ scope: '__proto__', totalAttempts: 3 })
      expect((await e.send('GET', '/v1/aggregate?scope=api&tenant=__proto__')).json()).toMatchObject({ totalAttempts: 0 })
      expect(Object.prototype).not.toHaveProperty('polluted')
      await servesAfter(e)
    })

    it('keeps a tenant\'s scope untouched while another tenant floods the same scope name', async () => {
      const e = await open({ rateLimit: false })
      expect((await e.send('POST', '/v1/report', { headers: json, body: report({ attempts: 4, throttled: 0, backlog: 2 }) })).status).toBe(200)
      const before = (await e.send('GET', '/v1/aggregate?scope=api', { headers: json })).json()
      const flood = { ...json, authorization: 'Bearer flood-token' }
      for (let i = 0; i < 200; i++) {
        const body = report({ clientId: `f-${i}`, attempts: 1_000_000, throttled: 1_000_000, backlog: 1_000_000, quota: { quota: 1e9, windowMs: 1 }, seq: Number.MAX_SAFE_INTEGER })
        expect((await e.send('POST', '/v1/report', { headers: flood, body })).status).toBe(200)
      }
      expect((await e.send('GET', '/v1/aggregate?scope=api', { headers: json })).json()).toEqual(before)
      expect(before).toMatchObject({ activeClients: 1, totalAttempts: 4, throttledReports: 0, fairSharePerSecond: 1 }) // an idle reader's share beside weight 2
      // ...and the tenant's own client is still counted (the flood used its id on its scope name)
      expect((await e.send('POST', '/v1/report', { headers: json, body: report({ seq: 1, attempts: 1, throttled: 1 }) })).json()).toMatchObject({ totalAttempts: 5, throttledReports: 1 })
    })

    it('refuses a bearer token named like an Object.prototype member', async () => {
      const e = await open()
      for (const token of ['__proto__', 'constructor', 'toString']) {
        expect((await e.send('POST', '/v1/report', { headers: { ...json, authorization: `Bearer ${token}` }, body: report() })).status, token).toBe(401)
      }
    })

    it('bounds what one address can make an open endpoint hold: scopes refused, ids overflowed, a flood of 429s counted once per bucket', async () => {
      const e = await open({ auth: false, rateLimit: false, quotas: {}, store: createMemoryStore({ maxScopesPerSource: 20, maxClientsPerSource: 8 }) })
      const open_ = { 'content-type': 'application/json' }
      const statuses = new Map<number, number>()
      for (let i = 0; i < 100; i++) {
        const reply = await e.send('POST', '/v1/report', { headers: open_, body: report({ scope: `lane-${i}` }) })
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
        if (reply.status === 429) {
          expect(reply.json().error).toBe('scope_limit')
          expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        }
      }
      expect(Object.fromEntries(statuses)).toEqual({ 200: 20, 429: 80 })
      let last
      for (let i = 0; i < 200; i++) {
        last = await e.send('POST', '/v1/report', { headers: open_, body: report({ scope: 'lane-0', clientId: `id-${i}`, attempts: 1_000_000, throttled: 1_000_000, backlog: 1_000_000 }) })
        expect(last.status).toBe(200)
      }
      // 8 ids tracked (c1, id-0..6), the rest share one overflow entry, each at most 10,000 attempts and one
      // 429 report per bucket (one address is its own median here, so no other address's bound applies)
      expect(last!.json()).toMatchObject({ activeClients: 9, throttledReports: 9, totalAttempts: 5 + 7 * 10_000 + 10_000 })
      const metrics = (await e.send('GET', '/metrics')).text
      expect(metrics).toContain('polite_telemetry_scopes 20')
      expect(metrics).toContain('polite_telemetry_tracked_clients 27') // 20 scopes' first ids, then 7 more on lane-0
      // A new scope is refused until one goes idle (70 s without a report) and frees its place.
      expect((await e.send('POST', '/v1/report', { headers: open_, body: report() })).status).toBe(429)
      clock += 70_000
      expect((await e.send('POST', '/v1/report', { headers: open_, body: report() })).status).toBe(200)
      expect((await e.send('GET', '/metrics')).text).toContain('polite_telemetry_scopes 1')
    })
  })
}

/** A report over real HTTP from a chosen loopback address, one attempt and no 429 unless `body` says otherwise. */
function postFrom(url: string, localAddress: string, token: string, body: object): Promise<{ status: number; json: any }> {
  return postReportFrom(url, localAddress, token, { attempts: 1, throttled: 0, ...body })
}

describe('reports claiming to be other reporters (real HTTP, one loopback address each)', () => {
  let server: Awaited<ReturnType<typeof serve>> | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('holds a flood from one reporter to one client\'s worth of the aggregate', async () => {
    server = await serve({
      port: 0,
      options: { auth: { tokens: { 'page-token': { tenant: 'shop', scopes: ['api'] } } }, quotas: { api: { perMinute: 60 } }, now: () => T0 },
    })
    const url = server.url
    for (let i = 1; i <= 20; i++) expect((await postFrom(url, `127.0.1.${i}`, 'page-token', { clientId: `honest-${i}` })).status).toBe(200)
    const before = (await postFrom(url, '127.0.1.1', 'page-token', { clientId: 'honest-1', attempts: 0 })).json
    expect(before).toMatchObject({ activeClients: 20, totalAttempts: 20, throttledReports: 0 })
    const statuses = new Map<number, number>()
    for (let i = 0; i < 100; i++) {
      const flood = await postFrom(url, '127.0.2.1', 'page-token', { clientId: 'loud', attempts: 1_000_000, throttled: 1_000_000, backlog: 1_000_000 })
      statuses.set(flood.status, (statuses.get(flood.status) ?? 0) + 1)
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 10, 429: 90 }) // one id: 2/s, a burst of 10
    const after = (await postFrom(url, '127.0.1.1', 'page-token', { clientId: 'honest-1', attempts: 0 })).json
    // One client more, its 10 reports clamped to 10,000 attempts and one 429 report per bucket, its
    // backlog's weight capped at twice the median address's (1): the honest share moves 20/22.
    expect(after).toMatchObject({ activeClients: 21, totalAttempts: 20 + 10_000, throttledReports: 1 })
    expect(after.fairSharePerSecond).toBeCloseTo(1 / 22)
    expect(before.fairSharePerSecond / after.fairSharePerSecond).toBeCloseTo(22 / 20)
  })

  it('counts a copied client id as the copier\'s own client: it can neither mute nor outvote the honest one', async () => {
    let clock = T0
    server = await serve({
      port: 0,
      options: { auth: { tokens: { 'page-token': { tenant: 'shop', scopes: ['api'] } } }, quotas: { api: { perMinute: 60 } }, now: () => clock },
    })
    const url = server.url
    for (let i = 1; i <= 5; i++) expect((await postFrom(url, `127.0.1.${i}`, 'page-token', { clientId: `honest-${i}`, seq: 1 })).status).toBe(200)
    // From one more address, a report naming each honest id with the largest seq and counts.
    for (let i = 1; i <= 5; i++) {
      const copied = await postFrom(url, '127.0.2.1', 'page-token', { clientId: `honest-${i}`, seq: Number.MAX_SAFE_INTEGER, attempts: 1_000_000, throttled: 1_000_000, backlog: 1_000_000 })
      expect(copied.status).toBe(200)
    }
    clock += 2_000
    // The honest clients' next reports count (before the fix: all five answered as duplicates and dropped).
    let last
    for (let i = 1; i <= 5; i++) last = await postFrom(url, `127.0.1.${i}`, 'page-token', { clientId: `honest-${i}`, seq: 2, attempts: 1, throttled: 1 })
    // The copier counts for twice the median address (2 clients), not for five others' (before: 50,010 attempts).
    expect(last!.json).toMatchObject({ activeClients: 7, throttledReports: 2 + 5, totalAttempts: 10 + 2 * 10_000 })
    expect(last!.json.fairSharePerSecond).toBeCloseTo(1 / 7)
  })
})
