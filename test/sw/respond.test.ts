import { describe, expect, it } from 'vitest'
import { DeadlineError, PoliteFetchError, QueueFullError, RetryBudgetError } from '../../src/client/errors.js'
import { PACED_HEADER } from '../../src/client/fetch-job.js'
import { giveUpResponse, markPaced, toGiveUp } from '../../sw/respond.js'

describe('markPaced', () => {
  it('copies status, headers and body, adding the paced marker', async () => {
    const upstream = new Response('{"ok":true}', { status: 201, statusText: 'Created', headers: { 'content-type': 'application/json', etag: '"1"' } })
    const marked = markPaced(upstream)
    expect(marked.status).toBe(201)
    expect(marked.statusText).toBe('Created')
    expect(marked.headers.get(PACED_HEADER)).toBe('paced')
    expect(marked.headers.get('etag')).toBe('"1"')
    expect(await marked.json()).toEqual({ ok: true })
  })

  it('keeps a 429 a 429 (the non-replayable-body case passes the server’s answer on)', () => {
    const marked = markPaced(new Response(null, { status: 429, headers: { 'retry-after': '3' } }))
    expect(marked.status).toBe(429)
    expect(marked.headers.get('retry-after')).toBe('3')
  })

  it('leaves an opaque response as it is', () => {
    const opaque = { status: 0, type: 'opaque' } as Response
    expect(markPaced(opaque)).toBe(opaque)
  })
})

describe('toGiveUp', () => {
  it('names the reason from the limiter’s error class', () => {
    expect(toGiveUp(new DeadlineError('late', { retryAt: 5000, attempts: 3 }))).toEqual({ reason: 'deadline', message: 'late', retryAt: 5000, attempts: 3 })
    expect(toGiveUp(new RetryBudgetError('spent'))?.reason).toBe('budget')
    expect(toGiveUp(new QueueFullError('full'))?.reason).toBe('queue-full')
    expect(toGiveUp(new PoliteFetchError('other'))?.reason).toBe('gave-up')
  })

  it('leaves aborts and network errors alone', () => {
    expect(toGiveUp(new TypeError('Failed to fetch'))).toBeUndefined()
    expect(toGiveUp(new DOMException('aborted', 'AbortError'))).toBeUndefined()
  })
})

describe('giveUpResponse', () => {
  const request = new Request('https://api.example/items')

  it('is a 503 problem with Retry-After rounded up to whole seconds', async () => {
    const response = giveUpResponse({ reason: 'deadline', message: 'deadline passed', retryAt: 12_300, attempts: 4 }, request, 10_000, false)
    expect(response.status).toBe(503)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.headers.get('retry-after')).toBe('3')
    expect(response.headers.get(PACED_HEADER)).toBe('paced')
    expect(response.headers.get('access-control-expose-headers')).toBeNull()
    expect(await response.json()).toEqual({
      type: 'urn:polite-fetch:gave-up:deadline',
      title: 'polite-fetch gave up before the server would accept this request',
      status: 503,
      detail: 'deadline passed',
      instance: 'https://api.example/items',
      reason: 'deadline',
      retryAt: new Date(12_300).toISOString(),
      attempts: 4,
    })
  })

  it('says at least one second, and exposes its headers to a cross-origin page', () => {
    const response = giveUpResponse({ reason: 'budget', message: 'spent', retryAt: 9_000 }, request, 10_000, true)
    expect(response.headers.get('retry-after')).toBe('1')
    expect(response.headers.get('access-control-expose-headers')).toContain('retry-after')
  })
})
