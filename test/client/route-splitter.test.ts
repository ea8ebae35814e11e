// The limiter's side of route splits, with scripted jobs and virtual time: what moves
// where when the rule (core/route-split.ts) says a route has a limit of its own.
import { describe, expect, it } from 'vitest'
import { createLimiter } from '../../src/client/create-limiter.js'
import type { SplitEvent } from '../../src/client/limiter-events.js'
import type { Job } from '../../src/client/limiter-types.js'
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
  it('moves the route, its waiting and in-flight calls to a lane of its own and calms the old lane', async () => {
    const { limiter, log, learned, splits, job, strategy, clock } = setup()
    const posts = ['p1', 'p2', 'p3', 'p4'].map((label) => track(limiter.run(job(POST, label))))
    const gets = ['g1', 'g2', 'g3'].map((label) => track(limiter.run(job(GET, label))))
    expect(log.started).toHaveLength(7) // clean lane: all at once
    // The server refuses the POSTs between admissions of the GETs; p4 is still in flight.
    for (const [label, signal] of [['p1', throttled()], ['g1', ok], ['p2', throttled()], ['g2', ok], ['p3', throttled()]] as const) {
      attemptOf(log, label).answer(signal)
      await flushPromises()
    }
    expect(splits).toEqual([])
    attemptOf(log, 'g3').answer(ok) // the evidence is complete with this success
    await flushPromises()
    expect(splits).toEqual([
      { scope: 'o', splitScope: SPLIT_SCOPE, route: POST, policy: '~route:POST /products', throttled: 3, otherSuccesses: 3, pacerReset: true },
    ])
    expect(learned).toEqual([`${POST} -> ~route:POST /products`])
    expect(gets.every((g) => g.settled)).toBe(true)
    const stats = new Map(limiter.stats().map((s) => [s.scope, s]))
    // The old lane starts afresh; the route's lane keeps the pace its 429s taught.
    expect(stats.get('o')).toMatchObject({ ratePerSecond: Infinity, queued: 0, inFlight: 0 })
    expect(stats.get(SPLIT_SCOPE)).toMatchObject({ ratePerSecond: 10, queued: 3, inFlight: 1 })
    const oldLanePacer = strategy.pacers.at(-1)!
    // p4's 429 arrives after the move: it feeds the route's lane, not the calmed one.
    attemptOf(log, 'p4').answer(throttled())
    await flushPromises()
    expect(oldLanePacer.results()).toEqual([])
    expect(limiter.stats().find((s) => s.scope === 'o')!.ratePerSecond).toBe(Infinity)
    expect(limiter.stats().find((s) => s.scope === SPLIT_SCOPE)!.throttled).toBe(1)
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

  it('keeps the old pacer when other routes were throttled too, and never splits on a shared refusal', async () => {
    const { limiter, log, splits, job } = setup()
    const labels = ['p1', 'g1', 'p2', 'g2', 'p3', 'g3', 'p4', 'g4']
    for (const label of labels) void limiter.run(job(label.startsWith('p') ? POST : GET, label, { retryBudget: 0 })).catch(() => {})
    const answers = [throttled(), ok, throttled(), throttled(), throttled(), ok, throttled(), ok]
    for (const [i, label] of labels.entries()) {
      attemptOf(log, label).answer(answers[i]!)
      await flushPromises()
    }
    expect(splits).toEqual([])
    expect(limiter.stats().map((s) => s.scope)).toEqual(['o'])
  })
})
