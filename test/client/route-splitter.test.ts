// The limiter's side of route splits, with scripted jobs and virtual time: what moves
// where when the rule (core/route-split.ts) says a route has a limit of its own.
import { describe, expect, it } from 'vitest'
import { createLimiter } from '../../src/client/create-limiter.js'
import type { SplitEvent } from '../../src/client/limiter-events.js'
import type { Job } from '../../src/client/limiter-types.js'
import type { Pacer, Strategy } from '../../src/core/types.js'
import { flushPromises, ManualClock } from '../helpers/manual-clock.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'
import { AttemptLog, ok, throttled, track } from '../helpers/scripted-job.js'

const POST = 'POST /products'
const GET = 'GET /items'
const SPLIT_SCOPE = 'o#~route:POST /products'

function setup() {
  const clock = new ManualClock()
  const strategy = recordingStrategy({ intervalMs: 100 })
  const limiter = createLimiter({ clock, random: () => 0, strategy, jitterRatio: 0 })
  const log = new AttemptLog()
  const learned: string[] = []
  const splits: SplitEvent[] = []
  limiter.on('split', (event) => splits.push(event))
  /** A job of `route` in lane `o` that, like a fetch job, stops naming its route once it leaves `o`. */
  const job = (route: string, label: string, extra: Partial<Job<string>> = {}) => {
    const scripted = log.job('o', label, { learnRoute: (policy: string) => void learned.push(`${route} -> ${policy}`), ...extra })
    Object.defineProperty(scripted, 'route', { get: () => (scripted.scope === 'o' ? route : undefined) })
    return scripted
  }
  return { clock, strategy, limiter, log, learned, splits, job }
}

const attemptOf = (log: AttemptLog, label: string, number = 1) => {
  const attempt = log.started.find((a) => a.job.label === label && a.number === number)
  if (attempt === undefined) throw new Error(`no attempt ${label}#${number}`)
  return attempt
}

describe('route splits in the limiter', () => {
  it("moves the route at its first 429, before the origin's pacer learns from it, with its waiting and in-flight calls", async () => {
    const { limiter, log, learned, splits, job, strategy, clock } = setup()
    const posts = ['p1', 'p2', 'p3', 'p4'].map((label) => track(limiter.run(job(POST, label))))
    const gets = ['g1', 'g2', 'g3'].map((label) => track(limiter.run(job(GET, label))))
    expect(log.started).toHaveLength(7) // clean lane: all at once
    const originPacer = strategy.pacers[0]!
    // p1 is refused while GETs are in flight: the route gets a lane of its own at once.
    attemptOf(log, 'p1').answer(throttled())
    await flushPromises()
    expect(splits).toEqual([
      { scope: 'o', splitScope: SPLIT_SCOPE, route: POST, policy: '~route:POST /products', throttled: 1, otherSuccesses: 0 },
    ])
    expect(learned).toEqual([`${POST} -> ~route:POST /products`])
    // The 429 taught the route's lane, never the origin's: the origin's pacer, which counted p1's
    // send, only hears that it ended (an `error`, which teaches no pacer about the quota).
    expect(originPacer.results()).toEqual([{ kind: 'error', status: 0 }])
    for (const label of ['p2', 'p3', 'p4']) attemptOf(log, label).answer(throttled())
    for (const label of ['g1', 'g2', 'g3']) attemptOf(log, label).answer(ok)
    await flushPromises()
    expect(gets.every((g) => g.settled)).toBe(true)
    expect(originPacer.results().map((r) => r.kind)).toEqual(['error', 'error', 'error', 'error', 'ok', 'ok', 'ok'])
    const stats = new Map(limiter.stats().map((s) => [s.scope, s]))
    expect(stats.get('o')).toMatchObject({ ratePerSecond: Infinity, queued: 0, inFlight: 0, throttled: 0 })
    expect(stats.get(SPLIT_SCOPE)).toMatchObject({ ratePerSecond: 10, throttled: 4 })
    expect(stats.get(SPLIT_SCOPE)!.queued + stats.get(SPLIT_SCOPE)!.inFlight).toBe(4)
    // The retries go out from the route's lane, one per 100 ms.
    await clock.advance(1_000)
    const retries = log.started.filter((a) => a.number === 2)
    expect(retries.map((a) => a.job.label).sort()).toEqual(['p1', 'p2', 'p3', 'p4'])
    expect(retries.every((a) => a.job.scope === SPLIT_SCOPE)).toBe(true)
    for (const retry of retries) retry.answer(ok)
    await flushPromises()
    expect(posts.every((p) => p.value !== undefined)).toBe(true)
    // A GET sent now goes out at once.
    const later = track(limiter.run(job(GET, 'g4')))
    expect(log.last().job.label).toBe('g4')
    log.last().answer(ok)
    await flushPromises()
    expect(later.value).toBe('g4#1')
  })

  it('puts the route on trial as soon as a call of another route queues behind it, at any time scale', async () => {
    for (const k of [0.01, 1, 100]) {
      const clock = new ManualClock()
      const limiter = createLimiter({ clock, random: () => 0, strategy: recordingStrategy({ intervalMs: 10_000 * k }), jitterRatio: 0, deadlineMs: Infinity })
      const log = new AttemptLog()
      const splits: SplitEvent[] = []
      limiter.on('split', (event) => splits.push(event))
      const job = (route: string, label: string) => {
        const scripted = log.job('o', label, { learnRoute: () => undefined })
        Object.defineProperty(scripted, 'route', { get: () => (scripted.scope === 'o' ? route : undefined) })
        return scripted
      }
      const post = track(limiter.run(job(POST, 'p1')))
      attemptOf(log, 'p1').answer(throttled())
      await flushPromises()
      // Nothing else in the lane: nothing to gain from a trial yet; the lane paces p1's retry.
      expect(splits).toEqual([])
      await clock.advance(5_000 * k)
      const get = track(limiter.run(job(GET, 'g1')))
      // g1 waits behind the pacing POST's 429 taught the lane: POST is tried apart now, not at its next answer.
      expect(splits.map((s) => [s.route, s.throttled])).toEqual([[POST, 1]])
      expect(limiter.stats().map((s) => s.scope)).toEqual(['o', SPLIT_SCOPE])
      expect(limiter.stats()[1]).toMatchObject({ queued: 1, inFlight: 0 })
      await clock.advance(5_000 * k)
      attemptOf(log, 'g1').answer(ok)
      attemptOf(log, 'p1', 2).answer(ok)
      await flushPromises()
      expect([get.value, post.value]).toEqual(['g1#1', 'p1#2'])
      await limiter.close()
    }
  })

  it('does not split a lane whose jobs name no route', async () => {
    const { limiter, log, splits } = setup()
    const labels = ['p1', 'g1', 'p2', 'g2', 'p3', 'g3']
    for (const label of labels) void limiter.run(log.job('o', label, { retryBudget: 0 })).catch(() => {})
    for (const label of labels) {
      attemptOf(log, label).answer(label.startsWith('p') ? throttled() : ok)
      await flushPromises()
    }
    expect(splits).toEqual([])
    expect(limiter.stats().map((s) => s.scope)).toEqual(['o'])
  })

  it('judges one route at a time: while one is on trial, the others only add evidence', async () => {
    const { limiter, log, splits, job } = setup()
    const labels = ['g1', 'p1', 'g2', 'p2']
    for (const label of labels) void limiter.run(job(label.startsWith('p') ? POST : GET, label, { retryBudget: 0 })).catch(() => {})
    for (const [label, signal] of [['g1', throttled()], ['p1', throttled()], ['g2', ok], ['p2', throttled()]] as const) {
      attemptOf(log, label).answer(signal)
      await flushPromises()
    }
    // g1's 429 with p1 waiting put GET on trial; POST's 429s that followed moved nothing.
    expect(splits.map((s) => s.route)).toEqual([GET])
    expect(limiter.stats().map((s) => s.scope)).toEqual(['o', 'o#~route:GET /items'])
  })

  it('makes the same split decisions when every time is multiplied by k (evidence is counted, not timed)', async () => {
    const decisions = async (k: number) => {
      const clock = new ManualClock()
      const strategy = recordingStrategy({ intervalMs: 10_000 * k })
      // The user's bounds (idleMs, deadlineMs) out of the way: they are durations given, not learned.
      const limiter = createLimiter({ clock, random: () => 0, strategy, jitterRatio: 0, idleMs: 1e12, deadlineMs: Infinity })
      const log = new AttemptLog()
      const seen: string[] = []
      const answered = new Set<(typeof log.started)[number]>()
      const answer = (attempt: (typeof log.started)[number], signal: Parameters<(typeof log.started)[number]['answer']>[0]) => {
        answered.add(attempt)
        attempt.answer(signal)
      }
      limiter.on('split', (event) => seen.push(`${event.route} after ${log.started.length} attempts`))
      limiter.on('attempt', (event) => seen.push(`${event.scope} ${event.label}#${event.attempt}`))
      const job = (route: string, label: string) => {
        const scripted = log.job('o', label, { learnRoute: () => undefined, retryBudget: 2 })
        Object.defineProperty(scripted, 'route', { get: () => (scripted.scope === 'o' ? route : undefined) })
        return scripted
      }
      // POSTs are refused at first, GETs always admitted; arrivals every 3 s × k (whole ms for k = 0.01).
      for (let i = 0; i < 12; i++) {
        const post = i % 3 === 0
        void limiter.run(job(post ? POST : GET, `${post ? 'p' : 'g'}${i}`)).catch(() => {})
        await flushPromises()
        for (const attempt of log.started.filter((a) => !answered.has(a))) {
          answer(attempt, attempt.job.label.startsWith('p') && attempt.number === 1 ? throttled() : ok)
          await flushPromises()
        }
        await clock.advance(3_000 * k)
      }
      await clock.advance(200_000 * k)
      for (const attempt of log.started.filter((a) => !answered.has(a))) answer(attempt, ok)
      await flushPromises()
      return seen
    }
    const base = await decisions(1)
    expect(base.some((d) => d.startsWith(`${POST} after`))).toBe(true)
    expect(await decisions(0.01)).toEqual(base)
    expect(await decisions(100)).toEqual(base)
  })

  it("wakes the origin's lane when an attempt its pacer counted ends in the route's lane", async () => {
    // A pacer that lets two attempts out at a time and, while two are out, asks a long wait it
    // expects an answer to cut short (as ATB does while it spends a lump the server named).
    const twoAtATime: Strategy = {
      name: 'two-at-a-time',
      create: (): Pacer => {
        let inFlight = 0
        return {
          ratePerSecond: Infinity,
          delayMs: () => (inFlight >= 2 ? 60_000 : 0),
          onSend: () => void inFlight++,
          onResult: () => void inFlight--,
          retryDelayMs: () => 0,
          toJSON: (now) => ({ kind: 'two-at-a-time', version: 1, savedAt: now }),
          tokens: () => Infinity,
        }
      },
    }
    const clock = new ManualClock()
    const start = clock.now()
    const limiter = createLimiter({ clock, random: () => 0, strategy: twoAtATime, jitterRatio: 0 })
    const log = new AttemptLog()
    const job = (route: string, label: string) => {
      const scripted = log.job('o', label, { learnRoute: () => undefined })
      Object.defineProperty(scripted, 'route', { get: () => (scripted.scope === 'o' ? route : undefined) })
      return scripted
    }
    const calls = [job(POST, 'p1'), job(POST, 'p2'), job(GET, 'g1'), job(GET, 'g2')].map((j) => track(limiter.run(j)))
    expect(log.started.map((a) => a.job.label)).toEqual(['p1', 'p2'])
    // p1's 429 splits its route off, with p2 still out; g1 takes p1's place in the origin's lane.
    attemptOf(log, 'p1').answer(throttled())
    await flushPromises()
    expect(limiter.stats().map((s) => s.scope)).toContain(SPLIT_SCOPE)
    expect(log.started.map((a) => a.job.label)).toContain('g1')
    expect(log.started.map((a) => a.job.label)).not.toContain('g2')
    // p2 answers in the route's lane; the origin's pacer, which counted its send, hears that it
    // ended, and g2, waiting for one of the origin's two to end, goes at once, not 60 s later.
    attemptOf(log, 'p2').answer(ok)
    await flushPromises()
    expect(clock.now()).toBe(start)
    expect(log.started.map((a) => a.job.label)).toContain('g2')
    await limiter.close()
    await flushPromises()
    expect(calls.every((c) => c.settled)).toBe(true)
  })
})
