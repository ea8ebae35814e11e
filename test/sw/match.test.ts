import { describe, expect, it } from 'vitest'
import { compileMatch, mustPassThrough } from '../../sw/match.js'

const WORKER = 'https://app.example'
const get = (url: string) => new Request(url)
/** A request shape the Request constructor refuses to build (navigate) or Node lacks. */
const shaped = (url: string, mode: string, cache = 'default') => ({ url, mode, cache }) as unknown as Request

describe('compileMatch', () => {
  it('matches a whole origin by its URL', () => {
    const m = compileMatch('https://api.example', WORKER)
    expect(m(get('https://api.example/items?x=1'))).toBe(true)
    expect(m(get('https://api.example:443/'))).toBe(true)
    expect(m(get('http://api.example/items'))).toBe(false)
    expect(m(get('https://api.example.evil/items'))).toBe(false)
  })

  it('matches an origin plus path prefix', () => {
    const m = compileMatch('https://api.example/v1/', WORKER)
    expect(m(get('https://api.example/v1/items'))).toBe(true)
    expect(m(get('https://api.example/v2/items'))).toBe(false)
  })

  it('reads a leading slash as a path on the worker origin', () => {
    const m = compileMatch('/api/', WORKER)
    expect(m(get('https://app.example/api/x'))).toBe(true)
    expect(m(get('https://api.example/api/x'))).toBe(false)
    expect(m(get('https://app.example/static/app.js'))).toBe(false)
  })

  it('tests a RegExp against the full URL', () => {
    const m = compileMatch(/\/quota\/\d+$/, WORKER)
    expect(m(get('https://x.example/quota/42'))).toBe(true)
    expect(m(get('https://x.example/quota/abc'))).toBe(false)
  })

  it('answers the same for every request with a global or sticky RegExp (test() keeps lastIndex)', () => {
    const global = /\/api\//g
    const m = compileMatch(global, WORKER)
    expect([1, 2, 3, 4].map(() => m(get('https://x.example/api/items')))).toEqual([true, true, true, true])
    expect(global.lastIndex).toBe(0) // the caller's RegExp is not touched
    const sticky = compileMatch(/https:\/\/x\.example\//y, WORKER)
    expect([1, 2].map(() => sticky(get('https://x.example/a')))).toEqual([true, true])
    expect(sticky(get('https://y.example/https://x.example/'))).toBe(false) // still anchored at the start
  })

  it('requires every part of an object rule, normalising the origin', () => {
    const m = compileMatch({ origin: 'HTTPS://API.Example:443', pathPrefix: '/v1' }, WORKER)
    expect(m(get('https://api.example/v1/a'))).toBe(true)
    expect(m(get('https://api.example/v2/a'))).toBe(false)
    expect(compileMatch({ pathPrefix: '/v1' }, WORKER)(get('https://any.example/v1'))).toBe(true)
  })

  it('accepts a list: any rule may match', () => {
    const m = compileMatch(['/api/', 'https://api.example'], WORKER)
    expect(m(get('https://app.example/api/x'))).toBe(true)
    expect(m(get('https://api.example/y'))).toBe(true)
    expect(m(get('https://other.example/y'))).toBe(false)
  })

  it('treats a throwing predicate as no match and reports it', () => {
    const errors: unknown[] = []
    const m = compileMatch(
      (r) => {
        if (r.url.includes('boom')) throw new Error('boom')
        return r.method === 'POST'
      },
      WORKER,
      (e) => errors.push(e),
    )
    expect(m(new Request('https://a.example/', { method: 'POST' }))).toBe(true)
    expect(m(get('https://a.example/'))).toBe(false)
    expect(m(get('https://a.example/boom'))).toBe(false)
    expect(errors).toHaveLength(1)
  })

  it('refuses a rule that is neither a URL nor a path, at install time', () => {
    expect(() => compileMatch('api.example', WORKER)).toThrow(TypeError)
  })
})

describe('mustPassThrough', () => {
  it('leaves navigations and no-cors requests alone', () => {
    expect(mustPassThrough(shaped('https://app.example/', 'navigate'))).toBe(true)
    expect(mustPassThrough(shaped('https://cdn.example/img.png', 'no-cors'))).toBe(true)
  })

  it('leaves only-if-cached outside same-origin mode alone', () => {
    expect(mustPassThrough(shaped('https://api.example/', 'cors', 'only-if-cached'))).toBe(true)
    expect(mustPassThrough(shaped('https://app.example/', 'same-origin', 'only-if-cached'))).toBe(false)
  })

  it('takes cors and same-origin requests', () => {
    expect(mustPassThrough(shaped('https://api.example/', 'cors'))).toBe(false)
    expect(mustPassThrough(shaped('https://app.example/', 'same-origin'))).toBe(false)
  })
})
