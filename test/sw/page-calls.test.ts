import { describe, expect, it } from 'vitest'
import { createPageCalls, MAX_EARLY_ABORTS } from '../../sw/page-calls.js'

describe('createPageCalls', () => {
  it('aborts an open call on its page’s word, and follows the request’s own signal where the browser aborts it', () => {
    const calls = createPageCalls()
    const signal = calls.open('a', new AbortController().signal)
    calls.abort('a')
    expect(signal.aborted).toBe(true)
    expect((signal.reason as DOMException).name).toBe('AbortError')

    const request = new AbortController()
    const followed = calls.open('b', request.signal)
    request.abort(new DOMException('page gone', 'AbortError'))
    expect((followed.reason as DOMException).message).toBe('page gone')
  })

  it('keeps an abort heard before its request, but only the last MAX_EARLY_ABORTS', () => {
    const calls = createPageCalls()
    for (let i = 0; i <= MAX_EARLY_ABORTS; i++) calls.abort(`early-${i}`)
    expect(calls.open(`early-${MAX_EARLY_ABORTS}`, new AbortController().signal).aborted).toBe(true)
    expect(calls.open('early-0', new AbortController().signal).aborted).toBe(false)
  })
})
