import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { aatb } from '../../src/core/pacers/aatb.js'
import { atb } from '../../src/core/pacers/atb.js'
import type { Aggregate, Pacer } from '../../src/core/types.js'
import { createTelemetryDriver } from '../../src/telemetry/telemetry-driver.js'
import { serve } from '../../src/server/serve.js'
import { createLimiter } from '../../src/client/create-limiter.js'
import { ManualClock, flushPromises } from '../helpers/manual-clock.js'
import { ScriptedJob } from '../helpers/scripted-job.js'
import { createTelemetryLink, type LinkReport, type TelemetryLink } from '../../src/telemetry/telemetry-link.js'

const T0 = 1_700_000_000_000
const aggregate: Aggregate = { activeClients: 4, totalAttempts: 40, throttledReports: 2, windowMs: 30_000, quotaPerSecond: 1, fairSharePerSecond: 0.25 }

function recordingLink(reply: Aggregate | undefined): TelemetryLink & { sent: LinkReport[] } {
  const sent: LinkReport[] = []
  return { sent, report: async (r) => { sent.push(r); return reply } }
}

describe('createTelemetryDriver', () => {
  it('reports a due lane with scope, client id and backlog, and feeds the reply to the pacer', async () => {
    let now = T0
    const pacer = aatb().create({ now, random: () => 0.5 })
    const seen: Aggregate[] = []
    const spy: Pacer = Object.assign(Object.create(pacer) as Pacer, { onAggregate: (_at: number, a: Aggregate) => { seen.push(a); pacer.onAggregate!(_at, a) } })
    const link = recordingLink(aggregate)
    const driver = createTelemetryDriver({ source: { lanes: () => [{ scope: 'api', pacer: spy, backlog: 0 }] }, link, clientId: 'me', now: () => now })
    await driver.tick()
    expect(link.sent).toEqual([]) // idle lane: nothing to say
    pacer.onSend(now, 1)
    pacer.onResult(now + 10, { kind: 'throttled', status: 429, policies: [{ name: 'default', quota: 60, windowMs: 60_000 }] })
    now += 20
    await driver.tick()
    expect(link.sent).toEqual([{ scope: 'api', clientId: 'me', attempts: 1, throttled: 1, backlog: 0, quota: { quota: 60, windowMs: 60_000 } }])
    expect(seen).toEqual([aggregate])
    now += 1_000
    await driver.tick()
    expect(link.sent).toHaveLength(1) // next routine report is a report window away
    now = T0 + 20 + 30_000
    await driver.tick()
    expect(link.sent).toHaveLength(2)
    expect(driver.stats()).toEqual({ sent: 2, failed: 0 })
  })

  it('skips lanes whose pacer does not report (plain ATB) and counts failed reports', async () => {
    const now = T0
    const plain = atb().create({ now, random: () => 0.5 })
    const assisted = aatb().create({ now, random: () => 0.5 })
    const link = recordingLink(undefined)
    const driver = createTelemetryDriver({
      source: { lanes: () => [{ scope: 'a', pacer: plain, backlog: 5 }, { scope: 'b', pacer: assisted, backlog: 5 }, { scope: 'c', pacer: undefined, backlog: 1 }] },
      link,
      clientId: 'me',
      now: () => now,
    })
    await driver.tick()
    expect(link.sent.map((r) => r.scope)).toEqual(['b'])
    expect(driver.stats()).toEqual({ sent: 1, failed: 1 })
  })

  it('keeps at most one report per lane in flight', async () => {
    let now = T0
    const pacer = aatb().create({ now, random: () => 0.5 })
    let release: (a: Aggregate | undefined) => void = () => {}
    let calls = 0
    const link: TelemetryLink = { report: () => { calls++; return new Promise((resolve) => { release = resolve }) } }
    const driver = createTelemetryDriver({ source: { lanes: () => [{ scope: 'api', pacer, backlog: 1 }] }, link, now: () => now })
    const first = driver.tick()
    pacer.onSend(now, 1)
    pacer.onResult(now, { kind: 'throttled', status: 429 })
    now += 5_000
    void driver.tick()
    expect(calls).toBe(1)
    release(undefined)
    await first
    void driver.tick()
    expect(calls).toBe(2)
    release(undefined)
    expect(driver.clientId).toMatch(/./)
  })

  it('reports right after a 429 event once started, and stops cleanly', async () => {
    const now = T0
    const pacer = aatb().create({ now, random: () => 0.5 })
    const link = recordingLink(aggregate)
    let notify: () => void = () => {}
    const timers: unknown[] = []
    const driver = createTelemetryDriver({
      source: { lanes: () => [{ scope: 'api', pacer, backlog: 0 }], onThrottled: (fn) => { notify = fn; return () => { notify = () => {} } } },
      link,
      now: () => now,
      timer: { set: (cb) => { timers.push(cb); return timers.length }, clear: () => {} },
    })
    driver.start()
    pacer.onSend(now, 1)
    pacer.onResult(now, { kind: 'throttled', status: 429 })
    notify()
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(link.sent).toHaveLength(1)
    driver.stop()
    notify()
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(link.sent).toHaveLength(1)
  })
})

describe('createTelemetryDriver over a real link to a hung endpoint', () => {
  it('stop() aborts a report in flight and clears its timeout: nothing is left to keep a process alive or feed a closed lane', async () => {
    const requests: IncomingMessage[] = []
    let arrived: () => void = () => {}
    const server = createServer((request) => { requests.push(request); arrived() }) // accepts, never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const timers = new Map<number, () => void>()
      let next = 0
      const linkTimer = { set: (callback: () => void) => { timers.set(++next, callback); return next }, clear: (handle: unknown) => { timers.delete(handle as number) } }
      const link = createTelemetryLink({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, timeoutMs: 60_000, timer: linkTimer })
      const now = T0
      const pacer = aatb().create({ now, random: () => 0.5 })
      const driver = createTelemetryDriver({ source: { lanes: () => [{ scope: 'api', pacer, backlog: 1 }] }, link, now: () => now, timer: { set: () => 0, clear: () => {} } })
      driver.start()
      const inRequest = new Promise<void>((resolve) => { arrived = resolve })
      const ticked = driver.tick()
      await inRequest
      expect(timers.size).toBe(1) // the report's 60 s timeout
      const gone = new Promise<void>((resolve) => requests[0]!.socket.once('close', () => resolve()))
      driver.stop()
      expect(timers.size).toBe(0) // before: 1, held for the full 60 s
      await gone // the endpoint sees the request go: before, it stayed open until the timeout
      await ticked
      expect(driver.stats()).toEqual({ sent: 1, failed: 1 })
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('createTelemetryDriver with many lanes against serve() (its default limits: 2 reports/s per client, burst 10)', () => {
  it('spreads reports within the endpoint\'s per-client budget, so every lane gets its aggregate, not only the first 10', async () => {
    let now = T0
    // The server on the same manual clock: its token buckets refill as the test's time passes.
    const server = await serve({ port: 0, options: { auth: false, now: () => now } })
    try {
      const lanes = Array.from({ length: 30 }, (_, i) => ({ scope: `https://api${i}.example`, pacer: aatb().create({ now, random: () => 0.5 }), backlog: 0 }))
      const answered = new Map<string, number>()
      for (const lane of lanes) {
        const take = lane.pacer.onAggregate!.bind(lane.pacer)
        lane.pacer.onAggregate = (at, a) => { answered.set(lane.scope, (answered.get(lane.scope) ?? 0) + 1); take(at, a) }
      }
      const driver = createTelemetryDriver({ source: { lanes: () => lanes }, link: createTelemetryLink({ url: server.url }), clientId: 'me', now: () => now })
      for (let second = 0; second < 300; second++) { // 10 report windows of 30 s, one tick a second
        for (const lane of lanes) { lane.pacer.onSend(now, 1); lane.pacer.onResult(now + 1, { kind: 'ok', status: 200 }) }
        await driver.tick()
        now += 1_000
      }
      const counts = lanes.map((lane) => answered.get(lane.scope) ?? 0)
      // Before: 10 lanes answered 10 times each, the other 20 never (200 of 300 reports refused 429).
      expect(Math.min(...counts)).toBeGreaterThanOrEqual(9)
      expect(driver.stats().failed).toBe(0)
    } finally {
      await server.close()
    }
  })
})

describe('createTelemetryDriver: tickMs as users may write it', () => {
  it.each([[Infinity, 2 ** 31 - 1], [3e9, 2 ** 31 - 1], [Number.NaN, 1_000], [-5, 1_000], [500, 500]])('tickMs %s ticks every %i ms (beyond 2^31-1 setTimeout fires after 1 ms: a tick a millisecond)', (tickMs, armed) => {
    const delays: number[] = []
    const driver = createTelemetryDriver({ source: { lanes: () => [] }, link: recordingLink(undefined), tickMs, timer: { set: (_callback, ms) => { delays.push(ms); return 0 }, clear: () => {} } })
    driver.start()
    driver.stop()
    expect(delays).toEqual([armed])
  })
})

describe('createTelemetryDriver with 10,000 lanes and a 429 storm', () => {
  it('neither sends every due lane at once nor scans every lane on every 429', async () => {
    let now = T0
    let dueChecks = 0
    const lanes = Array.from({ length: 10_000 }, (_, i) => {
      const pacer = aatb().create({ now, random: () => 0.5 })
      const dueAt = pacer.reportDueAt!.bind(pacer)
      pacer.reportDueAt = (at, backlog) => { dueChecks++; return dueAt(at, backlog) }
      return { scope: `https://o${i}.example`, pacer, backlog: 1 }
    })
    let notify = (): void => {}
    let reports = 0
    const driver = createTelemetryDriver({
      source: { lanes: () => lanes, onThrottled: (listener) => { notify = listener; return () => {} } },
      link: { report: async () => { reports++; return undefined } },
      now: () => now,
      timer: { set: () => 0, clear: () => {} },
    })
    driver.start()
    for (const lane of lanes) { lane.pacer.onSend(now, 1); lane.pacer.onResult(now, { kind: 'throttled', status: 429 }) }
    for (let event = 0; event < 200; event++) { // a second of 429s, each in its own turn
      notify()
      await new Promise((resolve) => setImmediate(resolve))
      now += 5
    }
    driver.stop()
    // Before 3123528: 10,000 reports in the first turn. At 3123528: 9 reports, but 2,000,000 due checks (13 ms a 429).
    expect(reports).toBeLessThanOrEqual(10)
    expect(dueChecks).toBeLessThan(50_000)
  })
})

describe('createTelemetryDriver: a crawler\'s backlog', () => {
  it('reports a lane with over 1,000,000 queued requests (capped at the protocol\'s 1,000,000), not never', async () => {
    const server = await serve({ port: 0, options: { auth: false } })
    try {
      const now = T0
      const pacer = aatb().create({ now, random: () => 0.5 })
      pacer.onSend(now, 1)
      pacer.onResult(now, { kind: 'throttled', status: 429 })
      const driver = createTelemetryDriver({ source: { lanes: () => [{ scope: 'https://big.example', pacer, backlog: 2_000_000 }] }, link: createTelemetryLink({ url: server.url }), now: () => now })
      await driver.tick()
      expect(driver.stats()).toEqual({ sent: 1, failed: 0 }) // before: failed 1, and never sent
    } finally {
      await server.close()
    }
  })
})

describe('createTelemetryDriver against an endpoint that answers a window of 1 ms', () => {
  it('keeps the client\'s report traffic within its budget though every lane is then due on every tick', async () => {
    let reports = 0
    const server = createServer((request, response) => { // valid replies, hostile window
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString()))
      request.on('end', () => {
        reports++
        const { scope } = JSON.parse(body) as { scope: string }
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ v: 1, scope, activeClients: 1, totalAttempts: 1, throttledReports: 0, windowMs: 1 }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      let now = T0
      const lanes = Array.from({ length: 30 }, (_, i) => ({ scope: `https://api${i}.example`, pacer: aatb().create({ now, random: () => 0.5 }), backlog: 1 }))
      const driver = createTelemetryDriver({ source: { lanes: () => lanes }, link: createTelemetryLink({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }), now: () => now })
      for (let second = 0; second < 60; second++) {
        await driver.tick()
        now += 1_000
      }
      // Unbounded, 30 lanes due every second: 1,800 reports in the minute (30 s windows: 60).
      expect(reports).toBeLessThanOrEqual(8 + 1.5 * 60)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('createTelemetryDriver over a link of the user\'s that breaks its contract', () => {
  it('a rejected report counts as failed and frees the lane: no unhandled rejection, the next report goes', async () => {
    let now = T0
    const pacer = aatb().create({ now, random: () => 0.5 })
    let calls = 0
    const link: TelemetryLink = { report: () => { calls++; return calls === 1 ? Promise.reject(new Error('transport down')) : Promise.resolve(aggregate) } }
    const driver = createTelemetryDriver({ source: { lanes: () => [{ scope: 'api', pacer, backlog: 1 }] }, link, now: () => now })
    pacer.onSend(now, 1)
    pacer.onResult(now, { kind: 'throttled', status: 429 })
    await driver.tick() // before: rejected with 'transport down', and the lane stayed "in flight" for good
    now += 1_000
    pacer.onSend(now, 1)
    pacer.onResult(now, { kind: 'throttled', status: 429 })
    await driver.tick()
    expect(calls).toBe(2)
    expect(driver.stats()).toEqual({ sent: 2, failed: 1 })
  })
})

describe('createTelemetryDriver over a real limiter whose idle lanes are evicted', () => {
  it.each([30_000, 480_000])('reports an evicted lane\'s last counts (endpoint window %i ms)', async (windowMs) => {
    // 480 s is the window docs/telemetry.md sizes for GitHub's 5,000 an hour: a lane's next report
    // is then 8 min away, and the limiter forgets a lane idle for 60 s.
    const clock = new ManualClock()
    const limiter = createLimiter({ strategy: aatb(), clock })
    let reported = 0
    const driver = createTelemetryDriver({
      source: { lanes: () => limiter.lanes() },
      link: { report: async (r) => { reported += r.attempts; return { activeClients: 1, totalAttempts: r.attempts, throttledReports: 0, windowMs } } },
      now: () => clock.now(),
      timer: { set: () => 0, clear: () => {} },
    })
    let sent = 0
    for (let second = 0; second < 900; second++) { // 5 min of a call every 3 s, then 10 min idle
      if (second < 300 && second % 3 === 0) {
        void limiter.run(new ScriptedJob('https://api.example', `r${second}`, (attempt) => { sent++; attempt.answer({ kind: 'ok', status: 200 }) })).catch(() => {})
      }
      await driver.tick()
      await clock.advance(1_000)
      await flushPromises()
    }
    expect([...limiter.lanes()]).toHaveLength(0) // evicted
    expect(sent).toBe(100)
    expect(reported).toBe(100) // before, at 480 s: 1 (the lane's first report), the other 99 went with the lane
    await limiter.close()
  })
})
