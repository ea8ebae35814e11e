import { describe, expect, it } from 'vitest'
import { endpointLimits } from '../../../src/sim/servers/endpoint-limits.js'
import { fixedWindow } from '../../../src/sim/servers/fixed-window.js'
import { tokenBucket } from '../../../src/sim/servers/token-bucket.js'

// A partner API gateway: 20 req/s for the account, 2 req/s on POST /products.
const gateway = () =>
  endpointLimits({
    global: tokenBucket({ capacity: 20, perMinute: 20 * 60 }),
    endpoints: [{ method: 'POST', path: '/products', perSecond: 2 }],
  })

describe('endpointLimits', () => {
  it('refuses the endpoint beyond its own limit, naming it, without charging the global quota', () => {
    const model = gateway()
    expect(model.admitRequest(0, 1, 'POST', '/products')).toMatchObject({ admitted: true, policy: 'POST /products', remaining: 1 })
    expect(model.admitRequest(0, 1, 'POST', '/products').admitted).toBe(true)
    expect(model.admitRequest(0, 1, 'POST', '/products')).toEqual({
      admitted: false,
      retryAfterMs: 500,
      remaining: 0,
      limit: 2,
      resetMs: 1000,
      windowMs: 1000,
      policy: 'POST /products',
    })
    // 20 − 2 left globally: the refusal above cost nothing.
    let admitted = 0
    for (let i = 0; i < 30; i++) if (model.admitRequest(0, 1, 'GET', '/items').admitted) admitted++
    expect(admitted).toBe(18)
    expect(model.admitRequest(0, 1, 'GET', '/items')).toMatchObject({ admitted: false, policy: 'global', retryAfterMs: 50 })
  })

  it('refuses the endpoint when the global quota is out, naming the global policy, without charging the endpoint', () => {
    const model = gateway()
    for (let i = 0; i < 20; i++) model.admitRequest(0, 1, 'GET', '/items')
    expect(model.admitRequest(0, 1, 'POST', '/products')).toMatchObject({ admitted: false, policy: 'global', retryAfterMs: 50 })
    expect(model.nextAdmitAtFor(0, 1, 'POST', '/products')).toBe(50)
    expect(model.admitRequest(100, 1, 'POST', '/products')).toMatchObject({ admitted: true, policy: 'POST /products', remaining: 1 })
  })

  it('waits for the later of the two when both refuse', () => {
    const model = gateway()
    model.admitRequest(0, 2, 'POST', '/products')
    for (let i = 0; i < 18; i++) model.admitRequest(0, 1, 'GET', '/')
    const refused = model.admitRequest(0, 1, 'POST', '/products')
    expect(refused).toMatchObject({ admitted: false, policy: 'POST /products', retryAfterMs: 500 })
    expect(model.nextAdmitAtFor(0, 1, 'POST', '/products')).toBe(500)
    expect(model.nextAdmitAtFor(0, 1, 'GET', '/')).toBe(50)
  })

  it('reports the tighter policy on admission', () => {
    const model = gateway()
    for (let i = 0; i < 19; i++) model.admitRequest(0, 1, 'GET', '/')
    expect(model.admitRequest(0, 1, 'POST', '/products')).toMatchObject({ admitted: true, policy: 'global', remaining: 0 })
  })

  it('matches methods case-insensitively, ignores the query, supports prefixes and any-method limits', () => {
    const model = endpointLimits({
      global: tokenBucket({ capacity: 100, perMinute: 6000 }),
      endpoints: [
        { method: 'post', path: '/products', perSecond: 2 },
        { method: '*', path: '/search/*', perSecond: 1, name: 'search' },
      ],
    })
    expect(model.endpointOf('POST', '/products?draft=1')).toBe('POST /products')
    expect(model.endpointOf('GET', '/products')).toBeUndefined()
    expect(model.endpointOf('PUT', '/search/a/b')).toBe('search')
    expect(model.endpointOf('GET', '/searchx')).toBeUndefined()
    expect(model.admitRequest(0, 1, 'get', '/search/q').admitted).toBe(true)
    expect(model.admitRequest(0, 1, 'GET', '/search/r')).toMatchObject({ admitted: false, policy: 'search', retryAfterMs: 1000 })
  })

  it('plain admit() counts against the global limit only', () => {
    const model = gateway()
    for (let i = 0; i < 20; i++) expect(model.admit(0, 1).admitted).toBe(true)
    expect(model.admit(0, 1).admitted).toBe(false)
    expect(model.nextAdmitAt(0, 1)).toBe(50)
  })

  it('builds endpoint models with a given factory', () => {
    const model = endpointLimits({
      global: tokenBucket({ capacity: 100, perMinute: 6000 }),
      endpoints: [{ method: 'GET', path: '/report', perSecond: 1, capacity: 3 }],
      createModel: (quota, policy) => fixedWindow({ limit: quota.capacity, windowMs: 60_000 / quota.perMinute * quota.capacity, policy }),
    })
    for (let i = 0; i < 3; i++) expect(model.admitRequest(0, 1, 'GET', '/report').admitted).toBe(true)
    expect(model.admitRequest(1, 1, 'GET', '/report')).toMatchObject({ admitted: false, retryAfterMs: 2999, policy: 'GET /report' })
  })
})
