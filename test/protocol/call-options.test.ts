// The per-call options a page carries to the worker in CALL_OPTIONS_HEADER: what the page
// writes, the worker reads back to the same values (through a real Headers object, as the
// request carries them), and what a page could forge is read as nothing.
import { describe, expect, it } from 'vitest'
import { CALL_OPTIONS_HEADER, readCallOptions, writeCallOptions } from '../../src/protocol/call-options.js'

/** The page's value as the worker sees it: set on a request's headers and read back. */
const carried = (politeFetch: unknown) => {
  const value = writeCallOptions(politeFetch)
  if (value === undefined) return undefined
  const headers = new Headers()
  headers.set(CALL_OPTIONS_HEADER, value)
  return readCallOptions(headers.get(CALL_OPTIONS_HEADER))
}

describe('call options', () => {
  it('carries every serialisable per-call option, Infinity and any scope included', () => {
    const options = { priority: -2.5, cost: 3, deadlineMs: 5_000, retryBudget: Infinity, scope: 'api ünïcode #1&x=2' }
    expect(carried(options)).toEqual(options)
    expect(carried({ deadlineMs: 1e21, scope: '' })).toEqual({ deadlineMs: 1e21, scope: '' })
  })

  it('writes nothing when there is nothing to carry', () => {
    for (const politeFetch of [undefined, null, 5, 'x', {}, { body: () => 'b' }, { other: 1 }]) {
      expect(writeCallOptions(politeFetch)).toBeUndefined()
    }
  })

  it('keeps what the client would do with a value of the wrong type', () => {
    // In the client a present cost that is no number costs 1 (not the client's `cost()`), so it
    // travels as NaN, which the client reads the same way; a wrong type anywhere else is absent.
    expect(carried({ cost: '3' })).toEqual({ cost: NaN })
    expect(carried({ cost: null })).toEqual({ cost: NaN })
    expect(carried({ priority: '9', deadlineMs: null, retryBudget: '1', scope: 7 })).toBeUndefined()
    expect(carried({ deadlineMs: NaN, priority: -Infinity })).toEqual({ deadlineMs: NaN, priority: -Infinity })
  })

  it('reads what a page could forge as nothing, and ignores keys it does not know', () => {
    expect(readCallOptions(null)).toBeUndefined()
    expect(readCallOptions('')).toBeUndefined()
    expect(readCallOptions('%%%&&&==')).toBeUndefined()
    expect(readCallOptions('__proto__=1&constructor=2&body=x&giveUp=response')).toBeUndefined()
    // Only a number as String() writes it: no blanks, hex, exponents or signs the page never writes.
    for (const text of ['', ' 5', '5 ', '0x10', '1e3', '+1', '1_000', 'infinity', '5ms', '5,0']) {
      expect(readCallOptions(`deadlineMs=${encodeURIComponent(text)}`)).toBeUndefined()
    }
    // A key given twice says two things: neither is taken.
    expect(readCallOptions('deadlineMs=1&deadlineMs=60000&scope=a')).toEqual({ scope: 'a' })
    expect(readCallOptions('deadlineMs=-1&priority=1e%2B21&x=1')).toEqual({ deadlineMs: -1, priority: 1e21 })
  })
})
