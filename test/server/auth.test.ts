import { describe, expect, it } from 'vitest'
import { createAuthenticator, parseTokenArg } from '../../src/server/auth.js'
import { createKeyedRateLimiter } from '../../src/server/keyed-rate-limiter.js'

describe('createAuthenticator', () => {
  const auth = createAuthenticator({ tokens: { s3cret: { tenant: 'acme', scopes: ['a'] }, all: { tenant: 'ops', scopes: '*' } } })
  it('maps bearer tokens to tenants and their scopes', () => {
    const acme = auth.check('Bearer s3cret')
    expect(acme.ok && acme.tenant).toBe('acme')
    expect(acme.ok && acme.allows('a')).toBe(true)
    expect(acme.ok && acme.allows('b')).toBe(false)
    const ops = auth.check('bearer all')
    expect(ops.ok && ops.allows('anything')).toBe(true)
  })
  it.each([[null], [''], ['Basic s3cret'], ['Bearer'], ['Bearer wrong'], ['Bearer s3cret extra']])('refuses %s', (header) => {
    expect(auth.check(header).ok).toBe(false)
  })
  it('is open without configuration', () => {
    const open = createAuthenticator(undefined)
    expect(open.open).toBe(true)
    expect(open.check(null).ok).toBe(true)
  })
})

describe('parseTokenArg', () => {
  it('reads [tenant=]token:scopes', () => {
    expect(parseTokenArg('abc:https://api.example.com,b', 0)).toEqual(['abc', { tenant: 'tenant-1', scopes: ['https://api.example.com', 'b'] }])
    expect(parseTokenArg('acme=abc:*', 3)).toEqual(['abc', { tenant: 'acme', scopes: '*' }])
    expect(parseTokenArg('abc', 0)).toBeUndefined()
    expect(parseTokenArg('abc:', 0)).toBeUndefined()
    expect(parseTokenArg(':a', 0)).toBeUndefined()
  })
})

describe('createKeyedRateLimiter', () => {
  it('allows a burst per key, then one per 1/rate, and forgets the least recent key beyond maxKeys', () => {
    const limiter = createKeyedRateLimiter({ perSecond: 2, burst: 3, maxKeys: 2 })
    expect([0, 1, 2, 3].map(() => limiter.take('a', 0))).toEqual([0, 0, 0, 500])
    expect(limiter.take('a', 500)).toBe(0)
    expect(limiter.take('b', 500)).toBe(0)
    limiter.take('c', 500) // evicts a
    expect(limiter.size()).toBe(2)
    expect(limiter.take('a', 500)).toBe(0) // a starts over with a full bucket
  })
})
