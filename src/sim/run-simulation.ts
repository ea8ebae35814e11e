// The discrete-event loop: virtual time, real pacers. Every attempt goes through the
// same Pacer seam the SDK's lanes use — `delayMs` before it, `onSend` when it goes,
// `onResult` with the Signal that `readSignals` parses from the headers the server
// model's Admission renders to — so what the simulator measures is the shipped code.
// Synchronous and allocation-light: a grid of tens of thousands of runs has to fit
// in a minute on two cores.
import type { Aggregate, Pacer, Signal } from '../core/types.js'
import { PROTOCOL_VERSION, replyToAggregate, type TelemetryReport } from '../telemetry/protocol.js'
import { maxInFlight, type ClientModel } from './client-model.js'
import { EventQueue } from './event-queue.js'
import type { HeaderSource } from './header-source.js'
import { summarizeRun, type RunMetrics } from './run-metrics.js'
import type { RunStrategy } from './run-strategy.js'
import { stream } from './random.js'
import { directReader, memoizedReader } from './signal-memo.js'
import type { Admission, Feedback, ServerModel } from './types.js'
import type { Workload } from './workload.js'

/** The two functions that turn a model's decision into a Signal, injected so tests can stand in. */
export interface SignalPath {
  /** `nowMs` is the server's clock (absolute dialects such as X-RateLimit-Reset need it). */
  feedbackHeaders(admission: Admission, feedback: Feedback, nowMs: number): Array<[string, string]>
  readSignals(status: number, headers: HeaderSource, now: number): Signal
}

export interface SimulationOptions {
  workload: Workload
  /** A fresh model: its state is consumed by the run. */
  server: ServerModel
  feedback: Feedback
  strategy: RunStrategy
  clientModel: ClientModel
  signalPath: SignalPath
  /** Seeds each client's pacer randomness (stream per client). */
  seed: number
  /** Round-trip time of one attempt; the server decides at half of it. Default 20 ms. */
  rttMs?: number
  /** Epoch ms of the run's origin: pacers and parsers see epoch times. Default 2025-01-01T00:00Z. */
  originMs?: number
  /** Record admitted/rejected attempts per second of the run. */
  timeline?: boolean
  /** Give up (and flag the run incomplete) after this much virtual time. Default 6 h. */
  maxDurationMs?: number
  /**
   * Parse each distinct (status, headers) once and shift cached times (see signal-memo.ts).
   * Default true; false sends every response through `readSignals`.
   */
  memoizeSignals?: boolean
  /** Called for every attempt when its response arrives (tests, timelines, live comparison). */
  trace?: (attempt: AttemptTrace) => void
}

export interface AttemptTrace {
  /** Client id (as in the workload). */
  client: number
  /** Index of the request within its client's arrivals. */
  request: number
  /** 1 for the first try, 2 for the first retry, … */
  attempt: number
  sentAt: number
  respondedAt: number
  status: number
  signal: Signal
}

export const DEFAULT_RTT_MS = 20
export const DEFAULT_ORIGIN_MS = Date.UTC(2025, 0, 1)
export const DEFAULT_MAX_DURATION_MS = 6 * 3600_000
// A pacer that asks for a sub-microsecond wait must still move time forward, or a
// float sum `now + delay === now` would spin the loop at one instant.
const MIN_WAIT_MS = 0.001
// The SDK's telemetry driver looks for due reports once a second.
const REPORT_RETRY_MS = 1000

// Processed events are recycled: a grid run pushes millions, and the garbage
// collector was the largest single cost before this pool.
const spare: SimEvent[] = []

const WAKE = 0
const ARRIVE = 1
const RESPONSE = 2
const REPORT = 3
const AGGREGATE = 4

interface SimEvent {
  at: number
  seq: number
  kind: number
  client: number
  request: number
  status: number
  headers: Array<[string, string]> | null
  aggregate: Aggregate | null
}

interface ClientState {
  id: number
  pacer: Pacer
  /** This client's requests are [offset, offset + count) in the run's flat arrays. */
  offset: number
  count: number
  /** Next request never sent yet (flat index). */
  next: number
  /** Failed requests waiting to go again, ascending (they all precede `next`). */
  retries: number[]
  inFlight: number
  done: number
  wakeAt: number
  /** Next scheduled telemetry check (Infinity: none). */
  reportAt: number
  /** A report is awaiting its reply (at most one per client, as the SDK's driver). */
  reporting: boolean
}

// Per-request state lives in flat scratch arrays shared by every run of the thread
// (runs are synchronous, so never two at once): allocating typed arrays per client and
// run made the garbage collector the grid's largest cost.
let arrival = new Float64Array(1024)
let firstAttempt = new Float64Array(1024)
let success = new Float64Array(1024)
let notBefore = new Float64Array(1024)
let failures = new Uint32Array(1024)

function reserve(requests: number): void {
  if (arrival.length >= requests) return
  const size = Math.max(requests, arrival.length * 2)
  arrival = new Float64Array(size)
  firstAttempt = new Float64Array(size)
  success = new Float64Array(size)
  notBefore = new Float64Array(size)
  failures = new Uint32Array(size)
}

export function runSimulation(options: SimulationOptions): RunMetrics {
  const { workload, server, feedback, strategy, signalPath } = options
  const rttMs = options.rttMs ?? DEFAULT_RTT_MS
  const halfRtt = rttMs / 2
  const origin = options.originMs ?? DEFAULT_ORIGIN_MS
  const deadline = origin + (options.maxDurationMs ?? DEFAULT_MAX_DURATION_MS)
  const cap = maxInFlight(options.clientModel)
  const telemetry = strategy.telemetry
  const scope = telemetry?.scope ?? 'sim'
  const replyDelayMs = telemetry?.replyDelayMs ?? rttMs
  let telemetryMessages = 0
  const queue = new EventQueue<SimEvent>()
  const timeline = options.timeline ? { admitted: [] as number[], rejected: [] as number[] } : undefined

  const push = (
    at: number,
    kind: number,
    client: number,
    request: number,
    status = 0,
    headers: Array<[string, string]> | null = null,
    aggregate: Aggregate | null = null,
  ): void => {
    const event = spare.pop()
    if (event === undefined) {
      queue.push({ at, seq: 0, kind, client, request, status, headers, aggregate })
      return
    }
    event.at = at
    event.kind = kind
    event.client = client
    event.request = request
    event.status = status
    event.headers = headers
    event.aggregate = aggregate
    queue.push(event)
  }

  let total = 0
  for (const c of workload.clients) total += c.arrivalsMs.length
  reserve(total)
  firstAttempt.fill(NaN, 0, total)
  success.fill(NaN, 0, total)
  notBefore.fill(0, 0, total)
  failures.fill(0, 0, total)

  const clients: ClientState[] = []
  let offset = 0
  for (const c of workload.clients) {
    const count = c.arrivalsMs.length
    if (count === 0) continue
    for (let j = 0; j < count; j++) arrival[offset + j] = origin + c.arrivalsMs[j]!
    const startAt = origin + c.startMs
    const pacer = strategy.strategy.create({ now: startAt, random: stream(options.seed, 'client', c.id) })
    const index = clients.length
    clients.push({
      id: c.id, pacer, offset, count, next: offset, retries: [], inFlight: 0, done: 0,
      wakeAt: Infinity, reportAt: Infinity, reporting: false,
    })
    wake(index, arrival[offset]!)
    if (telemetry && pacer.reportDueAt && pacer.takeReport) scheduleReport(index, startAt)
    offset += count
  }

  let remaining = total
  let attempts = 0
  let throttled = 0
  let incomplete = false

  function wake(index: number, at: number): void {
    const c = clients[index]!
    if (at >= c.wakeAt) return
    c.wakeAt = at
    push(at, WAKE, index, -1)
  }

  function scheduleReport(index: number, at: number): void {
    const c = clients[index]!
    if (at >= c.reportAt) return
    c.reportAt = at
    push(at, REPORT, index, -1)
  }

  /** Requests that have arrived and not yet succeeded: the lane's backlog. */
  function backlog(c: ClientState, now: number): number {
    let arrived = c.next
    const end = c.offset + c.count
    while (arrived < end && arrival[arrived]! <= now) arrived++
    return arrived - c.offset - c.done
  }

  // The SDK's telemetry driver, in virtual time: report when the pacer says it is due,
  // one report in flight per client; a finished client stops reporting.
  function checkReport(index: number, now: number): void {
    const c = clients[index]!
    const pacer = c.pacer
    if (!telemetry || !pacer.reportDueAt || !pacer.takeReport || c.reporting || c.done === c.count) return
    const queued = backlog(c, now)
    let due = pacer.reportDueAt(now, queued)
    if (due <= now) {
      const report = pacer.takeReport(now)
      if (report) {
        telemetryMessages++
        const message: TelemetryReport = {
          v: PROTOCOL_VERSION,
          scope,
          clientId: `c${c.id}`,
          attempts: report.attempts,
          throttled: report.throttled,
          backlog: queued,
        }
        if (report.quota) message.quota = report.quota
        const reply = telemetry.aggregator.report(message, now, telemetry.configuredQuotaPerSecond)
        c.reporting = true
        push(now + replyDelayMs, AGGREGATE, index, -1, 0, null, replyToAggregate(reply))
        return
      }
      due = pacer.reportDueAt(now, queued)
      // A pacer that declines to report yet still says "due now" is asked again a tick later.
      if (due <= now) due = now + REPORT_RETRY_MS
    }
    if (Number.isFinite(due)) scheduleReport(index, due)
  }

  function pump(index: number, now: number): void {
    const c = clients[index]!
    const end = c.offset + c.count
    while (c.inFlight < cap) {
      let request: number
      let readyAt: number
      if (c.retries.length > 0) {
        request = c.retries[0]!
        readyAt = notBefore[request]!
      } else if (c.next < end) {
        request = c.next
        readyAt = arrival[request]!
      } else {
        return
      }
      if (readyAt > now) {
        wake(index, readyAt)
        return
      }
      const waitMs = c.pacer.delayMs(now, 1)
      if (waitMs > 0) {
        wake(index, now + Math.max(waitMs, MIN_WAIT_MS))
        return
      }
      c.pacer.onSend(now, 1)
      if (c.retries.length > 0) c.retries.shift()
      else c.next++
      if (Number.isNaN(firstAttempt[request]!)) firstAttempt[request] = now
      c.inFlight++
      attempts++
      push(now + halfRtt, ARRIVE, index, request)
    }
  }

  const read = options.memoizeSignals === false ? directReader(signalPath) : memoizedReader(signalPath)
  const render = signalPath.feedbackHeaders

  for (;;) {
    const event = queue.pop()
    if (!event) break
    const now = event.at
    if (now > deadline) {
      incomplete = true
      break
    }
    const index = event.client
    const c = clients[index]!
    switch (event.kind) {
      case WAKE:
        if (now !== c.wakeAt) break // superseded by an earlier wake that already ran
        c.wakeAt = Infinity
        pump(index, now)
        break
      case ARRIVE: {
        const admission = server.admit(now, 1)
        const status = admission.admitted ? 200 : 429
        if (timeline) {
          const second = Math.floor((now - origin) / 1000)
          const series = admission.admitted ? timeline.admitted : timeline.rejected
          while (timeline.admitted.length <= second) timeline.admitted.push(0)
          while (timeline.rejected.length <= second) timeline.rejected.push(0)
          series[second]!++
        }
        push(now + halfRtt, RESPONSE, index, event.request, status, render(admission, feedback, now))
        break
      }
      case RESPONSE: {
        const request = event.request
        const signal = read(event.status, event.headers!, now)
        c.pacer.onResult(now, signal)
        c.inFlight--
        options.trace?.({
          client: c.id,
          request: request - c.offset,
          attempt: failures[request]! + 1,
          sentAt: now - rttMs,
          respondedAt: now,
          status: event.status,
          signal,
        })
        if (event.status === 200) {
          success[request] = now
          c.done++
          remaining--
        } else {
          throttled++
          const failed = ++failures[request]!
          let readyAt = now + (c.pacer.retryDelayMs?.(now, failed, signal) ?? 0)
          // The harness holds every strategy to the server's word: never before retryAt.
          if (signal.retryAt !== undefined && signal.retryAt > readyAt) readyAt = signal.retryAt
          notBefore[request] = readyAt
          insertSorted(c.retries, request)
        }
        if (remaining === 0) break
        if (telemetry) checkReport(index, now)
        pump(index, now)
        break
      }
      case REPORT:
        if (now !== c.reportAt) break // superseded
        c.reportAt = Infinity
        checkReport(index, now)
        pump(index, now)
        break
      case AGGREGATE:
        c.reporting = false
        c.pacer.onAggregate?.(now, event.aggregate!)
        checkReport(index, now)
        pump(index, now)
        break
    }
    event.headers = null
    event.aggregate = null
    spare.push(event)
    if (remaining === 0) break
  }
  if (remaining > 0) incomplete = true

  return summarizeRun({
    clients: clients.map((c) => ({ offset: c.offset, count: c.count })),
    arrival,
    firstAttempt,
    success,
    attempts,
    throttled,
    telemetryMessages,
    incomplete,
    ...(timeline ? { timeline } : {}),
  })
}

function insertSorted(list: number[], value: number): void {
  let i = list.length
  list.push(value)
  while (i > 0 && list[i - 1]! > value) {
    list[i] = list[i - 1]!
    i--
  }
  list[i] = value
}
