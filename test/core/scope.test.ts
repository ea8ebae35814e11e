import { describe, expect, it } from 'vitest'
import { pathTemplate, policyScope, RouteScopes, routeKey } from '../../src/core/scope.js'

describe('pathTemplate', () => {
  it('replaces resource ids, keeps route names', () => {
    expect(pathTemplate('/users/42/orders')).toBe('/users/:id/orders')
    expect(pathTemplate('/items/3f2b8c1e-9d4a-4b6e-8f00-1234567890ab')).toBe('/items/:id')
    expect(pathTemplate('/blobs/0123456789abcdef0123')).toBe('/blobs/:id')
    expect(pathTemplate('/v2/products')).toBe('/v2/products')
    expect(pathTemplate('/products')).toBe('/products')
  })
})

describe('RouteScopes', () => {
  const origin = 'https://api.example.com'

  it('uses the origin until a policy is learned for the route', () => {
    const routes = new RouteScopes()
    expect(routes.scopeFor('POST', origin, '/products')).toBe(origin)
    routes.learn('POST', origin, '/products', 'products-write')
    expect(routes.scopeFor('POST', origin, '/products')).toBe(policyScope(origin, 'products-write'))
    expect(routes.scopeFor('GET', origin, '/items')).toBe(origin)
    expect(routes.scopeFor('GET', origin, '/products')).toBe(origin)
  })

  it('applies a learned policy to every resource of the route', () => {
    const routes = new RouteScopes()
    routes.learn('GET', origin, '/users/1', 'users')
    expect(routes.scopeFor('get', origin, '/users/999')).toBe(`${origin}#users`)
    expect(routeKey('get', origin, '/users/999')).toBe(`GET ${origin}/users/:id`)
  })

  it('ignores missing or over-long policy names and stays bounded', () => {
    const routes = new RouteScopes(2)
    routes.learn('GET', origin, '/a', undefined)
    routes.learn('GET', origin, '/a', 'x'.repeat(65))
    expect(routes.size).toBe(0)
    routes.learn('GET', origin, '/a', 'pa')
    routes.learn('GET', origin, '/b', 'pb')
    routes.learn('GET', origin, '/c', 'pc')
    expect(routes.size).toBe(2)
    expect(routes.scopeFor('GET', origin, '/a')).toBe(origin)
    expect(routes.scopeFor('GET', origin, '/c')).toBe(`${origin}#pc`)
  })
})
