import { describe, expect, it } from 'vitest'
import { createLimiter } from '../../src/client/create-limiter.js'
import {
  ClosedError,
  DeadlineError,
  PoliteFetchError,
  QueueFullError,
  RetryAfterTooLongError,
  RetryBudgetError,
} from '../../src/client/errors.js'
import type { LimiterOptions } from '../../src/client/options.js'
import type { AttemptOutcome, AttemptReport, Job, Settlement } from '../../src/client/limiter-types.js'
import type { Signal } from '../../src/core/types.js'
import { memoryStore } from '../../src/storage/memory-store.js'
import { flushPromises, ManualClock } from '../helpers/manual-clock.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'
import { AttemptLog, networkError, ok, overloaded, throttled, track } from '../helpers/scripted-job.js'

function setup(options: LimiterOptions & { intervalMs?: number; retryDelayMs?: number } = {}) {
  const clock = new ManualClock()
  const strategy = recordingStrategy({ intervalMs: options.intervalMs ?? 100, retryDelayMs: options.retryDelayMs ?? 0 })
  const limiter = createLimiter({ clock, random: () => 0, strategy, ...options })
  const log = new AttemptLog()
  return { clock, strategy, limiter, log, t0: clock.now() }
}

describe('createLimiter: the clean path', () => {
  it('sends every first attempt at once before any congestion', async () => {
    const { limiter, log, clock, t0 } = setup()
    const calls = Array.from({ length: 20 }, (_, i) => track(limiter.run(log.job('s', `r${i}`))))
    expect(log.started).toHaveLength(20) // same tick: no queue, no timer
    for (const attempt of log.started) attempt.answer(ok)
    await flushPromises()
    expect(calls.every((c) => c.settled && c.value !== undefined)).toBe(true)
    expect(clock.now()).toBe(t0)
    expect(limiter.stats()[0]).toMatchObject({ scope: 's', attempts: 20, successes: 20, queued: 0, inFlight: 0 })
  })

  it('consults the pacer before every attempt, first attempts included', async () => {
    const { limiter, log, strategy } = setup()
    const call = track(limiter.run(log.job('s', 'a')))
    log.last().answer(ok)
    await flushPromises()
    expect(call.value).toBe('a#1')
    const pacer = strategy.pacers[0]
    expect(pacer?.calls.map((c) => c.method)).toEqual(['delayMs', 'onSend', 'onResult'])
  })

  it('caps attempts in flight per lane and starts the next as one settles', async () => {
    const { limiter, log } = setup({ maxInFlight: 2 })
    const calls = ['a', 'b', 'c'].map((label) => track(limiter.run(log.job('s', label))))
    expect(log.order()).toEqual(['a#1', 'b#1'])
    log.started[0]?.answer(ok)
    await flushPromises()
    expect(log.order()).toEqual(['a#1', 'b#1', 'c#1'])
    log.started[1]?.answer(ok)
    log.started[2]?.answer(ok)
    await flushPromises()
    expect(calls.map((c) => c.value)).toEqual(['a#1', 'b#1', 'c#1'])
  })
})

describe('createLimiter: server guidance', () => {
  it('retries no earlier than retryAt, to the millisecond', async () => {
    const { limiter, log, clock, t0 } = setup()
    const call = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 2_000))
    await clock.advance(1_999)
    expect(log.started).toHaveLength(1)
    await clock.advance(1)
    expect(log.started).toHaveLength(2)
    expect(clock.now()).toBe(t0 + 2_000)
    log.last().answer(ok)
    await flushPromises()
    expect(call.value).toBe('a#2')
  })

  it('spreads waits derived from retryAt by a bounded random extra', async () => {
    const { limiter, log, clock, t0 } = setup({ random: () => 0.5, jitterRatio: 0.1, maxJitterMs: 1_000 })
    track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 2_000))
    // 0.5 × min(1000, 0.1 × 2000) = 100 ms after retryAt
    await clock.advance(2_099)
    expect(log.started).toHaveLength(1)
    await clock.advance(1)
    expect(log.started).toHaveLength(2)
  })

  it('gates the whole lane: calls queued behind a 429 also wait for retryAt', async () => {
    const { limiter, log, clock, t0 } = setup({ maxInFlight: 1 })
    track(limiter.run(log.job('s', 'a')))
    track(limiter.run(log.job('s', 'b')))
    log.last().answer(throttled(t0 + 500))
    await clock.advance(499)
    expect(log.order()).toEqual(['a#1'])
    await clock.advance(1)
    expect(log.order()).toEqual(['a#1', 'a#2'])
  })

  it('puts retries back at the head of their lane, in arrival order', async () => {
    const { limiter, log, clock, t0 } = setup({ maxInFlight: 3, intervalMs: 0 })
    for (const label of ['a', 'b', 'c']) void limiter.run(log.job('s', label))
    void limiter.run(log.job('s', 'd')) // queued: the lane is at its cap
    const [a, b, c] = log.started
    b?.answer(throttled(t0 + 100)) // b fails before a, but a arrived first
    a?.answer(throttled(t0 + 100))
    await flushPromises()
    expect(log.order()).toEqual(['a#1', 'b#1', 'c#1'])
    c?.answer(ok)
    await clock.advance(100)
    expect(log.order()).toEqual(['a#1', 'b#1', 'c#1', 'a#2', 'b#2', 'd#1'])
  })

  it('fails fast with RetryAfterTooLongError carrying retryAt when the server asks for too long', async () => {
    const { limiter, log, t0 } = setup({ maxRetryAfterMs: 10_000 })
    const call = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 3_600_000))
    await flushPromises()
    expect(call.error).toBeInstanceOf(RetryAfterTooLongError)
    expect((call.error as RetryAfterTooLongError).retryAt).toBe(t0 + 3_600_000)
    expect((call.error as RetryAfterTooLongError).request).toBe('a')
    expect(log.started[0]?.discarded).toBe(true)
  })

  it('rejects at once with DeadlineError carrying retryAt when retryAt falls past the deadline', async () => {
    const { limiter, log, clock, t0 } = setup({ deadlineMs: 5_000 })
    const call = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 8_000))
    await flushPromises()
    expect(call.error).toBeInstanceOf(DeadlineError)
    expect((call.error as DeadlineError).retryAt).toBe(t0 + 8_000)
    expect(clock.now()).toBe(t0)
    // A later call cannot make it either: it fails at once too.
    const later = track(limiter.run(log.job('s', 'b')))
    await flushPromises()
    expect(later.error).toBeInstanceOf(DeadlineError)
    expect(log.started).toHaveLength(1)
  })

  it('ends a call whose deadline passes while it waits in the queue', async () => {
    const { limiter, log, clock, t0 } = setup({ maxInFlight: 1, deadlineMs: 1_000 })
    track(limiter.run(log.job('s', 'a')))
    const b = track(limiter.run(log.job('s', 'b')))
    await clock.advance(999)
    expect(b.settled).toBe(false)
    await clock.advance(1)
    expect(b.error).toBeInstanceOf(DeadlineError)
    expect(clock.now()).toBe(t0 + 1_000)
  })

  it('ends each attempt in flight at its own deadline, whatever order they started and finish in', async () => {
    const { limiter, log, clock } = setup({ deadlineMs: 5_000 })
    const a = track(limiter.run(log.job('s', 'a')))
    await clock.advance(100)
    const b = track(limiter.run(log.job('s', 'b', { deadlineMs: 1_000 })))
    const c = track(limiter.run(log.job('s', 'c', { deadlineMs: 3_000 })))
    log.started[2]?.answer(ok)
    await clock.advance(999)
    expect([a.settled, b.settled, c.value]).toEqual([false, false, 'c#1'])
    await clock.advance(1)
    expect(b.error).toBeInstanceOf(DeadlineError)
    expect(a.settled).toBe(false)
    await clock.advance(3_899)
    expect(a.settled).toBe(false)
    await clock.advance(1)
    expect(a.error).toBeInstanceOf(DeadlineError)
  })

  it('a deadline during an attempt rejects at once; the attempt is abandoned, its slot freed when it ends', async () => {
    const { limiter, log, clock } = setup({ deadlineMs: 1_000 })
    const call = track(limiter.run(log.job('s', 'a')))
    await clock.advance(1_000)
    expect(call.error).toBeInstanceOf(DeadlineError)
    expect(log.last().signal.aborted).toBe(false)
    expect(limiter.stats()[0]?.inFlight).toBe(1)
    log.last().answer(ok)
    await flushPromises()
    expect(limiter.stats()[0]).toMatchObject({ inFlight: 0, successes: 1 })
  })

  it('with a per-attempt timeout, a deadline during an attempt aborts the attempt', async () => {
    const { limiter, log, clock } = setup({ deadlineMs: 1_000, timeoutMs: 5_000 })
    const call = track(limiter.run(log.job('s', 'a')))
    await clock.advance(1_000)
    expect(call.error).toBeInstanceOf(DeadlineError)
    expect(log.last().signal.aborted).toBe(true)
    expect(log.last().signal.reason).toBe(call.error)
  })

  it('close() aborts attempts in flight through the shared attempt signal', async () => {
    const { limiter, log } = setup()
    const call = track(limiter.run(log.job('s', 'a')))
    await limiter.close()
    expect(call.error).toBeInstanceOf(ClosedError)
    expect(log.last().signal.aborted).toBe(true)
  })

  it('a 429 during a wait lengthens it instead of keeping a stale wake-up', async () => {
    const { limiter, log, clock, t0 } = setup({ maxInFlight: 2, intervalMs: 100 })
    track(limiter.run(log.job('s', 'a')))
    track(limiter.run(log.job('s', 'b')))
    log.started[0]?.answer(throttled()) // pacer now allows one send per 100 ms
    await flushPromises()
    track(limiter.run(log.job('s', 'c'))) // would go at t0 + 100 (after a's retry)
    log.started[1]?.answer(throttled(t0 + 1_000)) // b's 429 says: not before t0 + 1000
    await clock.advance(999)
    expect(log.order()).toEqual(['a#1', 'b#1'])
    await clock.advance(1)
    expect(log.order().slice(0, 3)).toEqual(['a#1', 'b#1', 'a#2'])
  })
})

describe('createLimiter: pacing and scopes', () => {
  it('a 429 on one in-flight request slows the whole lane', async () => {
    const { limiter, log, clock, strategy, t0 } = setup({ intervalMs: 100 })
    track(limiter.run(log.job('s', 'a')))
    track(limiter.run(log.job('s', 'b')))
    log.started[0]?.answer(throttled()) // no retryAt: only the pacer knows to slow down
    log.started[1]?.answer(ok)
    await flushPromises()
    void limiter.run(log.job('s', 'c')) // a fresh call waits behind a's retry
    expect(log.order()).toEqual(['a#1', 'b#1'])
    await clock.advance(100)
    expect(log.order()).toEqual(['a#1', 'b#1', 'a#2'])
    log.last().answer(ok)
    await clock.advance(100)
    expect(log.order()).toEqual(['a#1', 'b#1', 'a#2', 'c#1'])
    expect(strategy.pacers[0]?.sends()).toEqual([t0, t0, t0 + 100, t0 + 200])
    expect(limiter.stats()[0]).toMatchObject({ throttled: 1, successes: 2, retries: 1, inFlight: 1 })
  })

  it('a 429 on one scope does not delay another scope', async () => {
    const { limiter, log, t0 } = setup()
    track(limiter.run(log.job('one', 'a')))
    log.last().answer(throttled(t0 + 30_000))
    await flushPromises()
    track(limiter.run(log.job('one', 'b')))
    const other = track(limiter.run(log.job('two', 'c')))
    expect(log.order()).toEqual(['a#1', 'c#1'])
    log.last().answer(ok)
    await flushPromises()
    expect(other.value).toBe('c#1')
  })

  it('evicts idle lanes and restores their pacer state from the store on next use', async () => {
    const store = memoryStore()
    const { limiter, log, clock, strategy } = setup({ store, idleMs: 1_000 })
    track(limiter.run(log.job('s', 'a')))
    await flushPromises() // restore from the (empty) store
    log.last().answer(throttled())
    await clock.advance(100)
    log.last().answer(ok)
    await flushPromises()
    expect(limiter.stats().map((s) => s.scope)).toEqual(['s'])
    await clock.advance(2_000)
    expect(limiter.stats()).toEqual([])
    expect(await store.get('polite-fetch:pacer:s')).toMatchObject({ kind: 'recording', paced: true })
    track(limiter.run(log.job('s', 'b')))
    await flushPromises()
    expect(strategy.pacers).toHaveLength(2)
    expect(strategy.pacers[1]?.init.state).toMatchObject({ kind: 'recording', paced: true })
    expect(strategy.pacers[1]?.paced).toBe(true)
  })

  it('keeps a pacing lane through idle gaps of a few of its own spacings, at any pace', async () => {
    // A slow quota's share leaves gaps longer than idleMs between a lane's own calls: evicted
    // there, the lane met the quota anew with a fresh pacer. Counted in its own spacings instead.
    for (const intervalMs of [20_000, 200_000]) {
      const { limiter, log, clock } = setup({ idleMs: 60_000, intervalMs, deadlineMs: Infinity })
      track(limiter.run(log.job('s', 'a')))
      log.last().answer(throttled())
      await clock.advance(intervalMs)
      log.last().answer(ok)
      await flushPromises()
      expect(limiter.stats()[0]?.ratePerSecond).toBe(1000 / intervalMs)
      await clock.advance(7.5 * intervalMs)
      expect(limiter.stats().map((s) => s.scope)).toEqual(['s'])
      await clock.advance(0.5 * intervalMs + 60_000)
      expect(limiter.stats()).toEqual([])
    }
  })

  it('keeps a lane through idle gaps of a few of its own traffic\'s spacings, paced or not', async () => {
    // A free lane's clock (first admission to first 429) is how its pacer measures the quota's time scale.
    const { limiter, log, clock } = setup({ idleMs: 60_000 })
    for (let i = 0; i < 3; i++) {
      track(limiter.run(log.job('s', `a${i}`)))
      log.last().answer(ok)
      await flushPromises()
      if (i < 2) await clock.advance(50_000)
    }
    expect(limiter.stats()[0]).toMatchObject({ ratePerSecond: Infinity, attempts: 3 })
    await clock.advance(375_000) // 7.5 of its 50 s spacings
    expect(limiter.stats()).toHaveLength(1)
    await clock.advance(70_000) // past 8, and the next sweep (every idleMs)
    expect(limiter.stats()).toEqual([])
  })

  it('evicts a lane used once after idleMs', async () => {
    const { limiter, log, clock } = setup({ idleMs: 60_000 })
    track(limiter.run(log.job('s', 'a')))
    log.last().answer(ok)
    await flushPromises()
    await clock.advance(59_999)
    expect(limiter.stats()).toHaveLength(1)
    await clock.advance(60_001)
    expect(limiter.stats()).toEqual([])
  })

  it('keeps an idle lane that a server retryAt still gates when there is no store', async () => {
    const { limiter, log, clock, t0 } = setup({ idleMs: 1_000, maxRetryAfterMs: 100_000, deadlineMs: 100_000 })
    const call = track(limiter.run(log.job('s', 'a', { retryBudget: 0 })))
    log.last().answer(throttled(t0 + 50_000))
    await flushPromises()
    expect(call.error).toBeInstanceOf(RetryBudgetError)
    await clock.advance(5_000)
    expect(limiter.stats()[0]?.gateUntil).toBe(t0 + 50_000)
  })
})

describe('createLimiter: aborts', () => {
  it('abort during the queue wait rejects with the reason and never sends', async () => {
    const { limiter, log } = setup({ maxInFlight: 1 })
    track(limiter.run(log.job('s', 'a')))
    const controller = new AbortController()
    const b = track(limiter.run(log.job('s', 'b', { signal: controller.signal })))
    controller.abort(new Error('stop'))
    await flushPromises()
    expect((b.error as Error).message).toBe('stop')
    log.started[0]?.answer(ok)
    await flushPromises()
    expect(log.order()).toEqual(['a#1'])
  })

  it('abort during an attempt aborts the attempt signal and rejects with the reason', async () => {
    const { limiter, log } = setup()
    const controller = new AbortController()
    const call = track(limiter.run(log.job('s', 'a', { signal: controller.signal })))
    controller.abort('gone')
    await flushPromises()
    expect(call.error).toBe('gone')
    expect(log.last().signal.aborted).toBe(true)
    expect(limiter.stats()[0]?.inFlight).toBe(0)
  })

  it('abort during a retry wait rejects at once', async () => {
    const { limiter, log, clock, t0 } = setup()
    const controller = new AbortController()
    const call = track(limiter.run(log.job('s', 'a', { signal: controller.signal })))
    log.last().answer(throttled(t0 + 10_000))
    await clock.advance(100)
    controller.abort('later')
    await flushPromises()
    expect(call.error).toBe('later')
    expect(clock.now()).toBe(t0 + 100)
    await clock.advance(20_000)
    expect(log.started).toHaveLength(1)
  })

  it('a retry listener that aborts the caller stops the retry from ever being sent', async () => {
    const { limiter, log, clock, t0 } = setup()
    const controller = new AbortController()
    limiter.on('retry', () => controller.abort('gave up in the listener'))
    const call = track(limiter.run(log.job('s', 'a', { signal: controller.signal })))
    log.last().answer(throttled(t0 + 1_000))
    await flushPromises()
    expect(call.error).toBe('gave up in the listener')
    await clock.advance(5_000)
    expect(log.started).toHaveLength(1)
    expect(limiter.stats()[0]).toMatchObject({ queued: 0, inFlight: 0 })
  })

  it('an already aborted signal rejects without an attempt', async () => {
    const { limiter, log } = setup()
    const call = track(limiter.run(log.job('s', 'a', { signal: AbortSignal.abort('before') })))
    await flushPromises()
    expect(call.error).toBe('before')
    expect(log.started).toHaveLength(0)
  })
})

describe('createLimiter: safety and settling', () => {
  it('rejects at once with QueueFullError when the lane queue is full', async () => {
    const { limiter, log } = setup({ maxInFlight: 1, maxQueue: 1 })
    track(limiter.run(log.job('s', 'a')))
    track(limiter.run(log.job('s', 'b')))
    const c = track(limiter.run(log.job('s', 'c')))
    await flushPromises()
    expect(c.error).toBeInstanceOf(QueueFullError)
    expect(PoliteFetchError.is(c.error)).toBe(true)
  })

  it('retries overloaded (503) for any job, but errors only when the job allows it', async () => {
    const { limiter, log, clock } = setup()
    const unsafe = track(limiter.run(log.job('s', 'post')))
    const failure = new TypeError('fetch failed')
    log.last().fail(failure)
    await flushPromises()
    expect(unsafe.error).toBe(failure)

    const safe = track(limiter.run(log.job('s', 'get', { retryErrors: true })))
    log.last().fail(new TypeError('fetch failed'))
    await clock.advance(50) // equal-jitter backoff: base 100 → 50 ms with random 0
    expect(log.order()).toEqual(['post#1', 'get#1', 'get#2'])
    log.last().answer(overloaded)
    await clock.advance(1_000)
    expect(log.order()).toEqual(['post#1', 'get#1', 'get#2', 'get#3'])
    log.last().answer(ok)
    await flushPromises()
    expect(safe.value).toBe('get#3')
  })

  it('returns the last value when an attempt says it is not retryable', async () => {
    const { limiter, log } = setup()
    const events: unknown[] = []
    limiter.on('give-up', (event) => events.push(event))
    const call = track(limiter.run(log.job('s', 'upload')))
    log.last().answer(throttled(), { retryable: false, reason: 'body-not-replayable' })
    await flushPromises()
    expect(call.value).toBe('upload#1')
    expect(events).toEqual([
      { scope: 's', label: 'upload', attempt: 1, reason: 'body-not-replayable', status: 429, retryAt: undefined },
    ])
  })

  it('rejects with RetryBudgetError when the budget is used up', async () => {
    const { limiter, log, clock } = setup({ retryBudget: 1 })
    const call = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled())
    await clock.next()
    log.last().answer(throttled())
    await flushPromises()
    expect(call.error).toBeInstanceOf(RetryBudgetError)
    expect((call.error as RetryBudgetError).attempts).toBe(2)
  })

  it('treats a per-attempt timeout as an error signal', async () => {
    const { limiter, log, clock, strategy } = setup({ timeoutMs: 500 })
    const call = track(limiter.run(log.job('s', 'a')))
    await clock.advance(500)
    expect(log.started[0]?.signal.aborted).toBe(true)
    expect((call.error as DOMException).name).toBe('TimeoutError')
    expect(strategy.pacers[0]?.results()).toEqual([{ kind: 'error', status: 0 }])
  })

  it('ends a call at its deadline when a timed-out attempt ignores its signal', async () => {
    const { limiter, clock } = setup({ timeoutMs: 500, deadlineMs: 2_000 })
    // An attempt that never settles and never looks at its signal (a fetch without abort support).
    const deaf: Job<string> = { scope: 's', attempt: () => new Promise<AttemptOutcome<string>>(() => {}) }
    const call = track(limiter.run(deaf))
    await clock.advance(500)
    expect(call.settled).toBe(false)
    await clock.advance(1_500)
    expect(call.error).toBeInstanceOf(DeadlineError)
    expect(limiter.stats()[0]?.inFlight).toBe(1) // abandoned, not cancelled: its slot frees when it ends
  })

  it('a timed-out attempt whose abort starts the next one at once leaves that attempt its own timeout', async () => {
    const { limiter, clock } = setup({ timeoutMs: 500, deadlineMs: 10_000, intervalMs: 0, errorBackoffBaseMs: 0 })
    // Attempts 1 and 2 fail synchronously when aborted (the retry then starts inside the abort); 3 succeeds.
    const job: Job<string> = {
      scope: 's',
      retryErrors: true,
      attempt: () => Promise.reject(new Error('unused')),
      start(signal, attempt, report: AttemptReport<string>) {
        if (attempt === 3) report.done({ signal: ok, value: 'third', retryable: true })
        else signal?.addEventListener('abort', () => report.failed(signal.reason))
      },
    }
    const call = track(limiter.run(job))
    await clock.advance(500)
    await clock.advance(500)
    await flushPromises()
    expect(call.value).toBe('third')
  })

  it('does not feed neutral (already paced) outcomes to the pacer and never retries them', async () => {
    const { limiter, log, strategy } = setup()
    const call = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(), { neutral: true, retryable: false })
    await flushPromises()
    expect(call.value).toBe('a#1')
    // The pacer hears only that the send it counted ended, as an error: nothing about the quota.
    expect(strategy.pacers[0]?.sends()).toHaveLength(1)
    expect(strategy.pacers[0]?.results()).toEqual([{ kind: 'error', status: 0 }])
  })

  it('close() rejects waiting calls with ClosedError and later runs too', async () => {
    const { limiter, log, t0 } = setup()
    const a = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 5_000))
    await flushPromises()
    await limiter.close()
    expect(a.error).toBeInstanceOf(ClosedError)
    await expect(limiter.run(log.job('s', 'b'))).rejects.toBeInstanceOf(ClosedError)
  })

  it('emits typed events for attempts, throttling, retries, rate changes and give-ups', async () => {
    const { limiter, log, clock, t0 } = setup()
    const seen: string[] = []
    limiter.on('attempt', (e) => seen.push(`attempt ${e.label} ${e.attempt} waited ${e.waitedMs}`))
    limiter.on('throttled', (e) => seen.push(`throttled ${e.status} ${e.retryAt! - t0}`))
    limiter.on('retry', (e) => seen.push(`retry ${e.attempt} in ${e.delayMs} (${e.reason})`))
    const off = limiter.on('rate', (e) => seen.push(`rate ${e.previousPerSecond} -> ${e.ratePerSecond}`))
    track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 300))
    await clock.advance(300)
    off()
    expect(seen).toEqual([
      'attempt a 1 waited 0',
      'throttled 429 300',
      'rate Infinity -> 10',
      'retry 2 in 300 (throttled)',
      'attempt a 2 waited 300',
    ])
  })

  it('every call settles under a flood of mixed failures', async () => {
    let seed = 42
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
      return seed / 2 ** 31
    }
    const { limiter, log, clock } = setup({ maxInFlight: 8, maxQueue: 150, deadlineMs: 20_000, random })
    const calls = Array.from({ length: 300 }, (_, i) => {
      const controller = new AbortController()
      if (random() < 0.1) controller.abort('early')
      const job = log.job(`scope${i % 3}`, `r${i}`, { signal: controller.signal, retryErrors: random() < 0.5 })
      return { controller, call: track(limiter.run(job)) }
    })
    let answered = 0
    for (let round = 0; round < 2_000 && calls.some((c) => !c.call.settled); round++) {
      for (const attempt of log.started.slice(answered)) {
        const r = random()
        if (attempt.signal.aborted) continue
        if (r < 0.05) calls[Number(attempt.job.label.slice(1))]?.controller.abort('late')
        else if (r < 0.35) attempt.answer(ok)
        else if (r < 0.55) attempt.answer(throttled(clock.now() + Math.floor(random() * 3_000)))
        else if (r < 0.65) attempt.answer(throttled(clock.now() + 120_000))
        else if (r < 0.8) attempt.answer(overloaded)
        else if (r < 0.9) attempt.fail(new TypeError('network'))
        else if (r < 0.95) attempt.answer(networkError, { retryable: true })
        // else: left hanging, the deadline must end it
      }
      answered = log.started.length
      await clock.advance(250)
    }
    expect(calls.filter((c) => !c.call.settled)).toHaveLength(0)
    // Attempts abandoned at their deadline hold their lane slot until they end.
    for (const attempt of log.started) attempt.answer(ok)
    await flushPromises()
    for (const lane of limiter.stats()) expect(lane).toMatchObject({ queued: 0, inFlight: 0 })
  })
})

describe('createLimiter: submit() with callback-style (start) jobs', () => {
  /** A job whose attempts report through `report` (no promise); the test answers them by hand. */
  function startJob(scope: string, label: string) {
    const reports: { report: AttemptReport<string>; signal: AbortSignal | undefined; number: number }[] = []
    const job: Job<string> = {
      scope,
      label,
      attempt: () => Promise.reject(new Error('start() is preferred')),
      start(signal, number, report) {
        reports.push({ report, signal, number })
      },
    }
    const settled: { value?: string; error?: unknown; count: number } = { count: 0 }
    const sink: Settlement<string> = {
      resolve(value) {
        settled.value = value
        settled.count++
      },
      reject(error) {
        settled.error = error
        settled.count++
      },
    }
    return { job, reports, settled, sink }
  }
  const outcome = (signal: Signal, value: string): AttemptOutcome<string> => ({ signal, value, retryable: true })

  it('starts the attempt inside submit on a clean lane and settles synchronously on its report', () => {
    const { limiter } = setup()
    const { job, reports, settled, sink } = startJob('s', 'a')
    limiter.submit(job, sink)
    expect(reports).toHaveLength(1)
    reports[0]!.report.done(outcome(ok, 'a#1'))
    // No promise anywhere between the report and the caller.
    expect(settled).toEqual({ value: 'a#1', count: 1 })
    expect(limiter.stats()[0]).toMatchObject({ attempts: 1, successes: 1, inFlight: 0 })
  })

  it('retries a throttled report and ignores a second report of the same attempt', async () => {
    const { limiter, clock } = setup()
    const { job, reports, settled, sink } = startJob('s', 'a')
    limiter.submit(job, sink)
    reports[0]!.report.done(outcome(throttled(), 'a#1'))
    reports[0]!.report.done(outcome(ok, 'late duplicate'))
    expect(settled.count).toBe(0)
    await clock.advance(1_000)
    expect(reports.map((r) => r.number)).toEqual([1, 2])
    reports[1]!.report.done(outcome(ok, 'a#2'))
    expect(settled).toEqual({ value: 'a#2', count: 1 })
  })

  it('a report made inside start() is finished on a microtask, not re-entrantly', async () => {
    const { limiter } = setup()
    let settledDuringStart: boolean | undefined
    let count = 0
    const job: Job<string> = {
      scope: 's',
      attempt: () => Promise.reject(new Error('unused')),
      start(_signal, _number, report) {
        report.failed(new Error('refused synchronously'))
        settledDuringStart = count > 0
      },
    }
    limiter.submit(job, { resolve: () => count++, reject: () => count++ })
    expect(settledDuringStart).toBe(false)
    expect(count).toBe(0)
    await flushPromises()
    expect(count).toBe(1)
    expect(limiter.stats()[0]).toMatchObject({ errors: 1, inFlight: 0 })
  })

  it('close() rejects calls whose attempts are in flight, however many come and go', async () => {
    const { limiter } = setup()
    const jobs = ['a', 'b', 'c', 'd'].map((label) => startJob('s', label))
    for (const { job, sink } of jobs) limiter.submit(job, sink)
    // b and d finish (swap-removal from the in-flight list), a and c stay in flight.
    jobs[1]!.reports[0]!.report.done(outcome(ok, 'b'))
    jobs[3]!.reports[0]!.report.done(outcome(ok, 'd'))
    await limiter.close()
    expect(jobs.map(({ settled }) => (settled.error instanceof ClosedError ? 'closed' : settled.value))).toEqual([
      'closed',
      'b',
      'closed',
      'd',
    ])
    expect(jobs[0]!.reports[0]!.signal?.aborted).toBe(true)
  })

  it('rejects through the sink when the limiter is closed', async () => {
    const { limiter } = setup()
    await limiter.close()
    const { job, settled, sink } = startJob('s', 'a')
    limiter.submit(job, sink)
    expect(settled.error).toBeInstanceOf(ClosedError)
  })
})

describe('createLimiter: giveUp', () => {
  const marked = (label: string) => (reason: string, retryAt: number | undefined) => `${label} gave up: ${reason} ${retryAt}`

  it("'throw' (the default) rejects a give-up after a response with the typed error", async () => {
    const { limiter, log, t0 } = setup({ maxRetryAfterMs: 1_000 })
    const call = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 5_000), { gaveUp: marked('a') })
    await flushPromises()
    expect(call.error).toBeInstanceOf(RetryAfterTooLongError)
  })

  it("'response' resolves a too-long Retry-After, a used-up budget and a deadline with the response, marked", async () => {
    const { limiter, log, t0 } = setup({ maxRetryAfterMs: 1_000, deadlineMs: 3_000, giveUp: 'response' })
    const tooLong = track(limiter.run(log.job('s1', 'a')))
    const budget = track(limiter.run(log.job('s2', 'b', { retryBudget: 0 })))
    const deadline = track(limiter.run(log.job('s3', 'c', { deadlineMs: 500 })))
    log.started[0]?.answer(throttled(t0 + 5_000), { gaveUp: marked('a') })
    log.started[1]?.answer(throttled(), { gaveUp: marked('b') })
    log.started[2]?.answer({ kind: 'overloaded', status: 503, retryAt: t0 + 900 }, { gaveUp: marked('c') })
    await flushPromises()
    expect(tooLong.value).toBe(`a gave up: retry-after-too-long ${t0 + 5_000}`)
    expect(budget.value).toBe('b gave up: retry-budget undefined')
    expect(deadline.value).toBe(`c gave up: deadline ${t0 + 900}`)
    expect(log.started).toHaveLength(3)
  })

  it("'response': a call that gives up while waiting for its retry answers with the server's last response", async () => {
    const { limiter, log, clock, t0 } = setup({ deadlineMs: 2_000, maxInFlight: 1, giveUp: 'response' })
    const a = track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled(t0 + 1_500), { gaveUp: marked('a') })
    await flushPromises()
    expect(log.started[0]?.discarded).toBe(true) // body released while it waits
    await clock.advance(1_500)
    // The retry is out and never answers: the deadline ends the call with the 429 it had.
    expect(log.started).toHaveLength(2)
    await clock.advance(500)
    expect(a.value).toBe(`a gave up: deadline undefined`)
  })

  it("'response': a call the gate puts past its deadline gets a copy of the gating response; without one, or on abort, it rejects", async () => {
    const { limiter, log, t0 } = setup({ deadlineMs: 2_000, giveUp: 'response' })
    const first = track(limiter.run(log.job('s', 'a')))
    const copies: boolean[] = []
    log.last().answer(throttled(t0 + 60_000 - 1), {
      gaveUp: (reason, retryAt, copy) => {
        copies.push(copy === true)
        return `${copy === true ? 'copy' : 'own'}: ${reason} ${retryAt}`
      },
    })
    await flushPromises()
    expect(first.value).toBe(`own: deadline ${t0 + 60_000 - 1}`)
    // The lane is gated past the next call's deadline by the server's word: that word answers it.
    const gated = track(limiter.run(log.job('s', 'b')))
    await flushPromises()
    expect(gated.value).toBe(`copy: deadline ${t0 + 60_000 - 1}`)
    expect(copies).toEqual([false, true])
    // A gate whose response cannot be handed out again: the call rejects.
    const plain = track(limiter.run(log.job('u', 'p')))
    log.last().answer(throttled(t0 + 60_000 - 1))
    await flushPromises()
    expect(plain.error).toBeInstanceOf(DeadlineError)
    const gatedPlain = track(limiter.run(log.job('u', 'q')))
    await flushPromises()
    expect(gatedPlain.error).toBeInstanceOf(DeadlineError)
    const controller = new AbortController()
    const other = track(limiter.run(log.job('t', 'c', { signal: controller.signal })))
    log.last().answer(throttled(), { gaveUp: marked('c') })
    await flushPromises()
    controller.abort(new Error('stop'))
    await flushPromises()
    expect((other.error as Error).message).toBe('stop')
  })

  it('a job overrides the limiter: giveUp per call', async () => {
    const { limiter, log } = setup({ retryBudget: 0 })
    const answered = track(limiter.run(log.job('s', 'a', { giveUp: 'response' })))
    const thrown = track(limiter.run(log.job('s', 'b')))
    log.started[0]?.answer(throttled(), { gaveUp: marked('a') })
    log.started[1]?.answer(throttled(), { gaveUp: marked('b') })
    await flushPromises()
    expect(answered.value).toBe('a gave up: retry-budget undefined')
    expect(thrown.error).toBeInstanceOf(RetryBudgetError)
  })

  it('rejects a bad giveUp option at create time', () => {
    expect(() => createLimiter({ giveUp: 'never' as 'throw' })).toThrow(/`giveUp` must be 'response' or 'throw'/)
  })
})

describe('createLimiter: deadlines against the lane’s pacing', () => {
  it('ends at once every queued call whose deadline comes before the head’s next send', async () => {
    // After a 429 the recording pacer allows one attempt per second.
    const { limiter, log, clock, t0 } = setup({ intervalMs: 1_000, deadlineMs: 1_500 })
    const calls = Array.from({ length: 4 }, (_, i) => track(limiter.run(log.job('s', `r${i}`))))
    for (const attempt of log.started) attempt.answer(throttled(t0 + 200))
    await flushPromises()
    // r0's retry fits (at 1 s); the next send is 1 s after it, past everyone's deadline: no waiting for it.
    await clock.advance(999)
    expect(calls.every((c) => !c.settled)).toBe(true)
    await clock.advance(1)
    expect(log.order()).toEqual(['r0#1', 'r1#1', 'r2#1', 'r3#1', 'r0#2'])
    expect(calls.slice(1).every((c) => c.error instanceof DeadlineError)).toBe(true)
    expect((calls[1]?.error as DeadlineError).retryAt).toBe(t0 + 2_000)
    expect(clock.now()).toBe(t0 + 1_000)
    log.last().answer(ok)
    await flushPromises()
    expect(calls[0]?.value).toBe('r0#2')
  })

  it('a fresh call the pacing cannot send before its deadline rejects at once', async () => {
    const { limiter, log, t0 } = setup({ intervalMs: 1_000 })
    track(limiter.run(log.job('s', 'a')))
    log.last().answer(throttled())
    await flushPromises() // paced now: a retried at once, the next send 1 s after it
    const late = track(limiter.run(log.job('s', 'b', { deadlineMs: 500 })))
    await flushPromises()
    expect(late.error).toBeInstanceOf(DeadlineError)
    expect((late.error as DeadlineError).retryAt).toBe(t0 + 1_000)
  })
})
