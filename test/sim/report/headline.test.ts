import { describe, expect, it } from 'vitest'
import { aatbTarget, evaluateHeadline, headlineTarget } from '../../../src/sim/report/headline.js'
import { row } from '../helpers/rows.js'

describe('headline targets', () => {
  it('sets the targets per server refill and feedback mode', () => {
    expect(headlineTarget('token-bucket-continuous', 'status-only')).toEqual({ shareOfUb: 0.1, perClient: 1, completionLimit: 1.15, completionBase: 'ub' })
    expect(headlineTarget('token-bucket-stepped', 'status-only')).toMatchObject({ shareOfUb: 0.25, completionLimit: 1.25 })
    expect(headlineTarget('leaky-bucket', 'retry-after')).toMatchObject({ shareOfUb: 0.03, completionLimit: 1.15 })
    expect(headlineTarget('sliding-window-counter', 'ratelimit')).toMatchObject({ shareOfUb: 0.01, perClient: 0.1, completionBase: 'oracle' })
    expect(headlineTarget('token-bucket-stepped', 'ratelimit')).toBeUndefined()
  })

  it('allows min(UB, max(share × UB, clients)) 429s and checks time and the AWS peer', () => {
    const rows = [
      row({ strategy: 'atb', throttledMean: 100, ubThrottledMean: 1000, completionMsMean: 340_000, ubCompletionMsMean: 300_000 }),
      row({ strategy: 'aws-adaptive', throttledMean: 1100 }),
    ]
    const [h] = evaluateHeadline(rows)
    expect(h!.allowedThrottled).toBe(100)
    expect(h).toMatchObject({ throttledOk: true, completionOk: true, fewerThanAws: true, pass: true })
    // 27 clients: with 200 UB 429s the floor is the client count, not 10% of UB.
    const [few] = evaluateHeadline([row({ throttledMean: 28, ubThrottledMean: 200 })])
    expect(few!.allowedThrottled).toBe(27)
    expect(few).toMatchObject({ throttledOk: false, pass: false })
    // Never more than UB itself.
    expect(evaluateHeadline([row({ ubThrottledMean: 5, throttledMean: 5 })])[0]!.allowedThrottled).toBe(5)
  })

  it('fails a row that is too slow or no better than aws-adaptive', () => {
    const slow = evaluateHeadline([row({ completionMsMean: 346_000, ubCompletionMsMean: 300_000 })])[0]!
    expect(slow).toMatchObject({ completionOk: false, pass: false })
    const peer = evaluateHeadline([row({ throttledMean: 50 }), row({ strategy: 'aws-adaptive', throttledMean: 50 })])[0]!
    expect(peer).toMatchObject({ fewerThanAws: false, pass: false })
    const oracle = evaluateHeadline([row({ feedback: 'ratelimit', throttledMean: 2, oracleRatio: 1.11 })])[0]!
    expect(oracle).toMatchObject({ allowedThrottled: 10, throttledOk: true, completionOk: false, completionLimit: '≤ 1.10× oracle' })
    expect(evaluateHeadline([row({ server: 'token-bucket-stepped', feedback: 'ratelimit' })])[0]!.pass).toBeUndefined()
  })

  it('judges AATB on status-only rows against its own, tighter targets, with messages per request', () => {
    expect(aatbTarget('token-bucket-continuous', 'status-only')).toMatchObject({ shareOfUb: 0.03, completionLimit: 1.15 })
    expect(aatbTarget('token-bucket-stepped', 'status-only')).toMatchObject({ shareOfUb: 0.1, completionLimit: 1.25 })
    expect(aatbTarget('token-bucket-continuous', 'retry-after')).toBeUndefined()
    const rows = [row({ strategy: 'aatb', throttledMean: 40, ubThrottledMean: 1000, telemetryMessagesMean: 400 })]
    const [h] = evaluateHeadline(rows, 'aatb', undefined, aatbTarget)
    expect(h).toMatchObject({ allowedThrottled: 30, throttledOk: false, fewerThanAws: undefined, pass: false })
    expect(h!.messagesPerRequest).toBeCloseTo(400 / rows[0]!.requests, 9)
  })
})
