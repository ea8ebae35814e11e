import { describe, expect, it } from 'vitest'
import { PAGE_MESSAGE, readPageMessage, toCloneable } from '../../src/protocol/worker-messages.js'

describe('readPageMessage', () => {
  it('reads the three page messages', () => {
    expect(readPageMessage({ type: PAGE_MESSAGE.stats, id: 3 })).toEqual({ type: PAGE_MESSAGE.stats, id: 3 })
    expect(readPageMessage({ type: PAGE_MESSAGE.stats, id: 'x' })).toEqual({ type: PAGE_MESSAGE.stats })
    expect(readPageMessage({ type: PAGE_MESSAGE.subscribe, events: ['retry'] })).toEqual({ type: PAGE_MESSAGE.subscribe, events: ['retry'] })
    expect(readPageMessage({ type: PAGE_MESSAGE.unsubscribe })).toEqual({ type: PAGE_MESSAGE.unsubscribe })
    expect(readPageMessage({ type: PAGE_MESSAGE.abort, call: 'c-1', extra: 1 })).toEqual({ type: PAGE_MESSAGE.abort, call: 'c-1' })
  })

  it('ignores other libraries’ messages and malformed ones', () => {
    for (const data of [null, 'polite-fetch:stats', 42, {}, { type: 'SKIP_WAITING' }, { type: PAGE_MESSAGE.subscribe }, { type: PAGE_MESSAGE.subscribe, events: [1] }, { type: PAGE_MESSAGE.unsubscribe, events: 'x' }, { type: PAGE_MESSAGE.abort }, { type: PAGE_MESSAGE.abort, call: '' }, { type: PAGE_MESSAGE.abort, call: 'x'.repeat(65) }]) {
      expect(readPageMessage(data)).toBeUndefined()
    }
  })
})

describe('toCloneable', () => {
  it('produces data structuredClone accepts, keeping numbers exact', () => {
    const detail = {
      scope: 'https://api.example',
      rate: Infinity,
      when: new Date(5),
      error: new TypeError('failed'),
      request: new Request('https://api.example/a', { method: 'POST' }),
      callback: () => 1,
      nested: [{ map: new Map([['a', 1]]) }],
    }
    const copy = toCloneable(detail)
    expect(() => structuredClone(copy)).not.toThrow()
    expect(copy).toEqual({
      scope: 'https://api.example',
      rate: Infinity,
      when: 5,
      error: { name: 'TypeError', message: 'failed' },
      request: { method: 'POST', url: 'https://api.example/a' },
      nested: [{ map: { a: 1 } }],
    })
  })

  it('bounds depth, so a cyclic object cannot hang delivery', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' }
    cyclic['self'] = cyclic
    expect(() => structuredClone(toCloneable(cyclic))).not.toThrow()
  })
})
