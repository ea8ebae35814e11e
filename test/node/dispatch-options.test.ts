import { Dispatcher, request } from 'undici'
import { describe, expect, it } from 'vitest'
import { none } from '../../src/core/pacers/index.js'
import { withSharedShape } from '../../src/node/dispatch-options.js'
import { politeAgent } from '../../src/node/index.js'

describe('withSharedShape', () => {
  it('copies a plain object: the same own properties, in the same order, with the same values', () => {
    const body = Buffer.from('x')
    const given = { origin: 'http://a.test', path: '/p', method: 'POST', body, custom: 1, [Symbol.for('s')]: 2 }
    const copy = withSharedShape(given as never)
    expect(copy).not.toBe(given)
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Reflect.ownKeys(copy)).toEqual(Reflect.ownKeys(given))
    expect(copy).toEqual(given)
    expect(copy.body).toBe(body)
  })

  it('hands anything but a plain object down as it is', () => {
    class Options {
      origin = 'http://a.test'
      path = '/'
      method = 'GET'
    }
    const instance = new Options()
    expect(withSharedShape(instance as never)).toBe(instance)
    const nullProto = Object.assign(Object.create(null), { path: '/', method: 'GET' })
    expect(withSharedShape(nullProto)).toBe(nullProto)
    // Object.assign would make an own `__proto__` key the copy's prototype.
    const protoKey = JSON.parse('{"path":"/","method":"GET","__proto__":{"x":1}}')
    expect(withSharedShape(protoKey)).toBe(protoKey)
  })

  it('the dispatcher under politeAgent gets every option request() built (extras included)', async () => {
    const seen: Dispatcher.DispatchOptions[] = []
    class Recording extends Dispatcher {
      override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        seen.push(opts)
        const raw = handler as unknown as { onConnect(abort: () => void): void; onHeaders(s: number, h: Buffer[], r: () => void, m: string): void; onComplete(t: Buffer[]): void }
        raw.onConnect(() => {})
        raw.onHeaders(200, [], () => {}, 'OK')
        raw.onComplete([])
        return true
      }
    }
    const agent = politeAgent({ dispatcher: new Recording(), strategy: none() })
    try {
      const res = await request('http://a.test/p?q=1', { dispatcher: agent, method: 'PUT', body: 'b', headers: { 'x-a': '1' }, opaque: 'o' } as never)
      await res.body.dump()
      expect(res.statusCode).toBe(200)
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatchObject({ origin: 'http://a.test', path: '/p?q=1', method: 'PUT', body: 'b', headers: { 'x-a': '1' }, opaque: 'o' })
      expect(Object.keys(seen[0]!)).toContain('dispatcher')
    } finally {
      await agent.close()
    }
  })
})
