import { describe, expect, it } from 'vitest'
import { feedbackHeaders } from '../../src/sim/feedback-headers.js'
import type { Admission } from '../../src/sim/types.js'

const admitted: Admission = { admitted: true, remaining: 99, limit: 100, resetMs: 750, windowMs: 75_000, policy: 'global' }
const refused: Admission = {
  admitted: false,
  retryAfterMs: 1_250,
  remaining: 0,
  limit: 100,
  resetMs: 74_200.5,
  windowMs: 75_000,
  policy: 'global',
}
const now = 1_700_000_000_000 // Tue, 14 Nov 2023 22:13:20 GMT

describe('feedbackHeaders', () => {
  it('status-only sends nothing, even on a refusal', () => {
    expect(feedbackHeaders(admitted, 'status-only', now)).toEqual([])
    expect(feedbackHeaders(refused, 'status-only', now)).toEqual([])
  })

  it('retry-after sends whole seconds rounded up, on refusals only', () => {
    expect(feedbackHeaders(admitted, 'retry-after', now)).toEqual([])
    expect(feedbackHeaders(refused, 'retry-after', now)).toEqual([['Retry-After', '2']])
    expect(feedbackHeaders({ ...refused, retryAfterMs: 1000 }, 'retry-after', now)).toEqual([['Retry-After', '1']])
    expect(feedbackHeaders({ ...refused, retryAfterMs: 1 }, 'retry-after', now)).toEqual([['Retry-After', '1']])
  })

  it('retry-after-ms sends the rounded-up seconds and the milliseconds side by side (OpenAI, Anthropic)', () => {
    expect(feedbackHeaders(admitted, 'retry-after-ms', now)).toEqual([])
    expect(feedbackHeaders({ ...refused, retryAfterMs: 600.2 }, 'retry-after-ms', now)).toEqual([
      ['Retry-After', '1'],
      ['retry-after-ms', '601'],
    ])
    expect(feedbackHeaders({ ...refused, retryAfterMs: Infinity }, 'retry-after-ms', now)).toEqual([])
  })

  it('retry-after is left out when no wait would ever help', () => {
    expect(feedbackHeaders({ ...refused, retryAfterMs: Infinity }, 'retry-after', now)).toEqual([])
    expect(feedbackHeaders({ ...refused, retryAfterMs: undefined }, 'retry-after', now)).toEqual([])
  })

  it('ratelimit sends IETF draft-10 fields on every response, plus Retry-After on refusals', () => {
    expect(feedbackHeaders(admitted, 'ratelimit', now)).toEqual([
      ['RateLimit-Policy', '"global";q=100;w=75'],
      ['RateLimit', '"global";r=99;t=1'],
    ])
    expect(feedbackHeaders(refused, 'ratelimit', now)).toEqual([
      ['RateLimit-Policy', '"global";q=100;w=75'],
      ['RateLimit', '"global";r=0;t=75'],
      ['Retry-After', '2'],
    ])
  })

  it('ratelimit quotes policy names as structured-field strings', () => {
    const [policy, limit] = feedbackHeaders({ ...admitted, policy: 'POST /products "v2"', windowMs: 1000, limit: 2, remaining: 1, resetMs: 0 }, 'ratelimit')
    expect(policy).toEqual(['RateLimit-Policy', '"POST /products \\"v2\\"";q=2;w=1'])
    expect(limit).toEqual(['RateLimit', '"POST /products \\"v2\\"";r=1;t=0'])
  })

  it('x-ratelimit sends epoch-second reset and the Date it was computed against', () => {
    expect(feedbackHeaders(admitted, 'x-ratelimit', now)).toEqual([
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '99'],
      ['X-RateLimit-Reset', '1700000001'],
      ['Date', 'Tue, 14 Nov 2023 22:13:20 GMT'],
    ])
    expect(feedbackHeaders(refused, 'x-ratelimit', now + 400)).toEqual([
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '1700000075'],
      ['Date', 'Tue, 14 Nov 2023 22:13:20 GMT'],
      ['Retry-After', '2'],
    ])
    expect(feedbackHeaders(admitted, 'x-ratelimit', now + 61_000)[3]).toEqual(['Date', 'Tue, 14 Nov 2023 22:14:21 GMT'])
  })

  it('never prints negative or fractional figures', () => {
    const odd: Admission = { admitted: false, retryAfterMs: -5, remaining: -1.5, limit: 2.7, resetMs: -1, windowMs: 400, policy: 'p' }
    expect(feedbackHeaders(odd, 'ratelimit', now)).toEqual([
      ['RateLimit-Policy', '"p";q=2;w=1'],
      ['RateLimit', '"p";r=0;t=0'],
      ['Retry-After', '0'],
    ])
  })
})
