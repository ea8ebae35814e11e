import { describe, expect, it } from 'vitest'
import { validateReport } from '../../src/telemetry/protocol.js'
import { wireClientId, wireScope } from '../../src/telemetry/wire-name.js'

describe('wireScope, wireClientId', () => {
  it('keeps a wire-ready scope as it is, and makes any other one wire-ready the same way every time', () => {
    expect(wireScope('https://api.example.com')).toBe('https://api.example.com')
    expect(wireScope('https://api.example.com#~route:POST /products')).toBe('https://api.example.com#~route:POST%20/products')
    expect(wireScope('tënant\tapi')).toBe('t%C3%ABnant%09api')
    const long = `https://api.example#~route:GET /${'a/'.repeat(200)}`
    expect(wireScope(long)).toHaveLength(256)
    expect(wireScope(long)).toBe(wireScope(long))
    expect(wireScope(`${long}b`)).not.toBe(wireScope(long))
    for (const scope of ['', ' ', 'x'.repeat(257), long, '\u{1F600}'.repeat(100), '\ud800']) {
      expect(validateReport({ v: 1, scope: wireScope(scope), clientId: wireClientId(scope), attempts: 0, throttled: 0 }).ok).toBe(true)
    }
  })
})
