// The default ATB on a quota that announces limit, remaining and reset but no window (OpenAI,
// Anthropic, GitHub): the lane infers the window from its own hints (inferred-window.ts) and then
// paces as on an announced one. Driven in virtual time by a small lane loop: 12 calls at once
// into a fixed window of 3 per `windowMs`, answers after `answerMs`, retries at the head after
// the 429's Retry-After (no jitter).
import { describe, expect, it } from 'vitest'
import { atb } from '../../../src/core/pacers/atb.js'
import { explainedByQuota } from '../../../src/core/pacers/atb-quota.js'
import type { Pacer, Signal } from '../../../src/core/types.js'

const T0 = 1_700_000_000_000
const QUOTA = 3

interface Run {
  /** Send times, relative to T0. */
  sends: number[]
  statuses: number[]
}

/** A fixed window of QUOTA per `windowMs`, its boundaries at T0 + n·windowMs, answering as the vendors do. */
function fixedWindow(windowMs: number, policy: boolean) {
  let index = -1
  let used = 0
  return (at: number): Signal => {
    const i = Math.floor((at - T0) / windowMs)
    if (i !== index) {
      index = i
      used = 0
    }
    const resetAt = T0 + (i + 1) * windowMs
    const admitted = used < QUOTA
    if (admitted) used++
    const signal: Signal = {
      kind: admitted ? 'ok' : 'throttled',
      status: admitted ? 200 : 429,
      remaining: QUOTA - used,
      limit: QUOTA,
      resetAt,
      policies: [{ name: 'requests', quota: QUOTA, unit: 'requests', ...(policy ? { windowMs } : {}) }],
    }
    if (!admitted) signal.retryAt = resetAt
    return signal
  }
}

/** 12 calls at T0 + `offsetMs` through one lane paced by `pacer`; every event in time order. */
function burst(pacer: Pacer, windowMs: number, answerMs: number, offsetMs: number, policy = false, calls = 12, deadlineMs = Infinity): Run {
  const server = fixedWindow(windowMs, policy)
  const queue: Array<{ id: number; notBefore: number; start: number }> = []
  const start = T0 + offsetMs
  for (let id = 0; id < calls; id++) queue.push({ id, notBefore: start, start })
  const answers: Array<{ at: number; id: number; signal: Signal; sentAt: number }> = []
  const run: Run = { sends: [], statuses: [] }
  let now = start
  for (let step = 0; step < 100_000 && (queue.length > 0 || answers.length > 0); step++) {
    // Answers due now first (they pump the lane), then every send the lane allows.
    answers.sort((a, b) => a.at - b.at)
    while (answers.length > 0 && answers[0]!.at <= now) {
      const answer = answers.shift()!
      pacer.onResult(now, answer.signal)
      run.statuses.push(answer.signal.status)
      if (answer.signal.kind !== 'ok') {
        const wait = pacer.retryDelayMs?.(now, 1, answer.signal) ?? 0
        queue.unshift({ id: answer.id, notBefore: Math.max(now + wait, answer.signal.retryAt ?? 0), start })
      }
    }
    let wakeAt = Infinity
    while (queue.length > 0) {
      const head = queue[0]!
      if (head.start + deadlineMs < now) {
        queue.shift()
        continue
      }
      const delay = pacer.delayMs(now, 1)
      const sendAt = Math.max(head.notBefore, now + delay)
      if (sendAt > now) {
        wakeAt = sendAt
        break
      }
      queue.shift()
      pacer.onSend(now, 1)
      run.sends.push(now - T0)
      answers.push({ at: now + answerMs, id: head.id, signal: server(now), sentAt: now })
    }
    const nextAnswer = answers.length > 0 ? Math.min(...answers.map((a) => a.at)) : Infinity
    const next = Math.min(wakeAt, nextAnswer)
    if (!Number.isFinite(next)) break
    now = next
  }
  return run
}

const atbPacer = (): Pacer => atb().create({ now: T0, random: () => 0.5 })

/** Sends per window of the server after the first burst. */
function perWindow(run: Run, windowMs: number, calls = 12): number[] {
  const counts = new Map<number, number>()
  for (const at of run.sends.slice(calls)) counts.set(Math.floor(at / windowMs), (counts.get(Math.floor(at / windowMs)) ?? 0) + 1)
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n)
}

describe('atb on a vendor quota without a window (limit, remaining, reset)', () => {
  it('treats a 429 with nothing left and a reset as the quota’s, not as congestion', () => {
    const vendor429: Signal = { kind: 'throttled', status: 429, remaining: 0, limit: 3, resetAt: T0 + 1000, retryAt: T0 + 1000 }
    expect(explainedByQuota(vendor429)).toBe(true)
    expect(explainedByQuota({ ...vendor429, limit: undefined })).toBe(false)
    expect(explainedByQuota({ ...vendor429, resetAt: undefined })).toBe(false)
    expect(explainedByQuota({ ...vendor429, remaining: 1 })).toBe(false)
    expect(explainedByQuota({ ...vendor429, limit: 0 })).toBe(false)
  })

  it.each([0, 300, 990])('burst %i ms into a 1 s window: only the first burst is refused, then 3 windows of 3', (offsetMs) => {
    const pacer = atbPacer()
    const run = burst(pacer, 1000, 5, offsetMs)
    expect(run.statuses.filter((s) => s === 429)).toHaveLength(9)
    expect(run.statuses.slice(0, 12).filter((s) => s === 429)).toHaveLength(9)
    expect(perWindow(run, 1000)).toEqual([3, 3, 3])
    expect(run.sends[run.sends.length - 1]!).toBeLessThan(4000)
    // The lane never left its free phase: the 429s were the quota's.
    expect(pacer.ratePerSecond).toBe(Infinity)
  })

  it('spends a reset like a lane that reads the window from RateLimit-Policy', () => {
    const inferred = burst(atbPacer(), 1000, 5, 200)
    const announced = burst(atbPacer(), 1000, 5, 200, true)
    // The first reset is spent before the window is known: one attempt, then what its answer says is left.
    expect(inferred.sends).toEqual(announced.sends)
  })

  it('deadline 1500 ms, 10 calls: the 3 that fit the window reopened at 1 s go with the first 3', () => {
    const run = burst(atbPacer(), 1000, 5, 0, false, 10, 1500)
    expect(run.statuses.filter((s) => s === 200)).toHaveLength(6)
    expect(run.sends.filter((at) => at >= 1000 && at < 1500)).toHaveLength(3)
  })

  it.each([0.01, 0.5, 7, 60, 3600])('scale-free: every time × %f gives every send × k (within the pacer’s 1 ms rounding)', (k) => {
    const base = burst(atbPacer(), 1000, 20, 300)
    const scaled = burst(atbPacer(), 1000 * k, 20 * k, 300 * k)
    expect(scaled.statuses).toEqual(base.statuses)
    expect(scaled.sends).toHaveLength(base.sends.length)
    for (let i = 0; i < base.sends.length; i++) expect(Math.abs(scaled.sends[i]! - base.sends[i]! * k)).toBeLessThanOrEqual(2)
  })

  it('a token bucket (reset = time until full) is read at its rate from the first burst', () => {
    // 3 units, one back every 333 ms, reset = when full: the lane is told the rate by the answers
    // of the first burst and needs no reset to pass.
    const pacer = atbPacer()
    const perUnitMs = 1000 / 3
    let level = QUOTA
    let levelAt = T0
    const bucket = (at: number): Signal => {
      level = Math.min(QUOTA, level + (at - levelAt) / perUnitMs)
      levelAt = at
      const admitted = level >= 1
      if (admitted) level -= 1
      const missing = QUOTA - level
      const resetAt = at + missing * perUnitMs
      const signal: Signal = { kind: admitted ? 'ok' : 'throttled', status: admitted ? 200 : 429, remaining: Math.floor(level), limit: QUOTA, resetAt }
      if (!admitted) signal.retryAt = at + (1 - level) * perUnitMs
      return signal
    }
    for (let i = 0; i < 3; i++) pacer.onSend(T0, 1)
    for (let i = 0; i < 3; i++) pacer.onResult(T0 + 5, bucket(T0 + 5 - i * 0))
    // Nothing left: the next unit comes back a unit's refill after the last hint, not at the full reset.
    const delay = pacer.delayMs(T0 + 5, 1)
    expect(delay).toBeGreaterThan(0)
    expect(delay).toBeLessThanOrEqual(Math.ceil(perUnitMs))
  })
})
