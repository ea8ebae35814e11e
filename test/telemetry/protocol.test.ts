import { describe, expect, it } from 'vitest'
import { parseReport, replyToAggregate, validateReply, validateReport } from '../../src/telemetry/protocol.js'

const report = { v: 1, scope: 'https://api.example.com', clientId: 'c-1', attempts: 10, throttled: 2 }
const reply = { v: 1, scope: 'api', activeClients: 3, totalAttempts: 40, throttledReports: 1, windowMs: 30000 }

describe('validateReport', () => {
  it('accepts a minimal and a full report, returning a clean copy', () => {
    expect(validateReport(report)).toEqual({ ok: true, value: report })
    const full = { ...report, quota: { quota: 80, windowMs: 60000 }, backlog: 5 }
    expect(validateReport(full)).toEqual({ ok: true, value: full })
  })

  it.each([
    ['not an object', 'x', 'must be a JSON object'],
    ['an array', [report], 'must be a JSON object'],
    ['null', null, 'must be a JSON object'],
    ['wrong version', { ...report, v: 2 }, 'v must be 1'],
    ['missing scope', { v: 1, clientId: 'c', attempts: 1, throttled: 0 }, 'scope is required'],
    ['a toString field', { ...report, toString: 1 }, 'toString is not a known field'],
    ['empty scope', { ...report, scope: '' }, 'scope must be 1..256'],
    ['long scope', { ...report, scope: 'a'.repeat(257) }, 'scope must be 1..256'],
    ['scope with spaces', { ...report, scope: 'a b' }, 'visible ASCII'],
    ['scope with control chars', { ...report, scope: 'a\nb' }, 'visible ASCII'],
    ['non-string client id', { ...report, clientId: 7 }, 'clientId must be a string'],
    ['long client id', { ...report, clientId: 'x'.repeat(129) }, 'clientId must be 1..128'],
    ['negative attempts', { ...report, attempts: -1 }, 'attempts must be within'],
    ['huge attempts', { ...report, attempts: 1e12 }, 'attempts must be within'],
    ['fractional attempts', { ...report, attempts: 1.5 }, 'attempts must be an integer'],
    ['string attempts', { ...report, attempts: '10' }, 'attempts must be an integer'],
    ['NaN-ish throttled', { ...report, throttled: null }, 'throttled must be an integer'],
    ['throttled above attempts', { ...report, throttled: 11 }, 'throttled must not exceed attempts'],
    ['unknown field', { ...report, admin: true }, 'admin is not a known field'],
    ['prototype key', JSON.parse('{"__proto__":{"x":1},"v":1}'), '__proto__ is not a known field'],
    ['zero quota', { ...report, quota: { quota: 0, windowMs: 1000 } }, 'quota.quota must be within'],
    ['quota without window', { ...report, quota: { quota: 5 } }, 'quota.windowMs is required'],
    ['infinite window', { ...report, quota: { quota: 5, windowMs: Infinity } }, 'quota.windowMs must be a finite number'],
    ['negative backlog', { ...report, backlog: -3 }, 'backlog must be within'],
    ['fractional seq', { ...report, seq: 1.5 }, 'seq must be an integer'],
    ['negative seq', { ...report, seq: -1 }, 'seq must be within'],
  ])('rejects %s', (_name, input, message) => {
    const result = validateReport(input)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toContain(message)
  })

  it('names a nested object without a stray dot', () => {
    expect(validateReport({ ...report, quota: 5 })).toEqual({ ok: false, error: 'quota must be a JSON object' })
    expect(validateReport([])).toEqual({ ok: false, error: 'message must be a JSON object' })
  })

  it('carries an optional sequence number through', () => {
    expect(validateReport({ ...report, seq: 41 })).toMatchObject({ ok: true, value: { seq: 41 } })
    const without = validateReport(report)
    expect(without.ok && 'seq' in without.value).toBe(false)
  })

  it('never throws, whatever it is given', () => {
    const odd: unknown[] = [undefined, 0, Symbol('x'), () => 1, new Map(), Object.create(null), { v: 1n }]
    for (const input of odd) expect(() => validateReport(input)).not.toThrow()
  })
})

describe('parseReport', () => {
  it('turns bad JSON into a validation error', () => {
    expect(parseReport('{nope')).toEqual({ ok: false, error: 'body is not valid JSON' })
    expect(parseReport(JSON.stringify(report)).ok).toBe(true)
  })
})

describe('validateReply', () => {
  it('accepts a reply and maps it onto the core Aggregate', () => {
    const full = { ...reply, quotaPerSecond: 80 / 60, fairSharePerSecond: 0.4 }
    const result = validateReply(full)
    expect(result.ok).toBe(true)
    if (result.ok) {
      expect(replyToAggregate(result.value)).toEqual({
        activeClients: 3, totalAttempts: 40, throttledReports: 1, windowMs: 30000, quotaPerSecond: 80 / 60, fairSharePerSecond: 0.4,
      })
    }
  })

  it.each([
    ['zero active clients', { ...reply, activeClients: 0 }],
    ['negative totals', { ...reply, totalAttempts: -1 }],
    ['a negative fair share', { ...reply, fairSharePerSecond: -1 }],
    ['a zero quota', { ...reply, quotaPerSecond: 0 }],
    ['a string count', { ...reply, throttledReports: '1' }],
    ['an extra field', { ...reply, pauseAllMs: 1e9 }],
    ['an html page', '<html>'],
  ])('rejects %s', (_name, input) => {
    expect(validateReply(input).ok).toBe(false)
  })
})
