// Drives AATB reporting for a limiter's lanes: every tick it asks each lane's pacer
// whether a report is due (`reportDueAt`: every report window, and promptly after a
// 429), sends `takeReport`'s counts with the lane's scope, client id and backlog
// through the link, and hands the reply to `pacer.onAggregate`. Fire and forget: no
// request waits for it, at most one report per lane is in flight, and a failed report
// (the link resolves undefined) changes nothing — the pacer keeps pacing locally.
import type { Aggregate, Pacer } from '../core/types.js'
import { MAX_REPORT_BACKLOG } from './protocol.js'
import { createReportBudget } from './report-budget.js'
import type { LinkTimer, TelemetryLink } from './telemetry-link.js'
import { timerDelayMs } from './timer-delay.js'

export interface TelemetryLane {
  scope: string
  pacer: Pacer | undefined
  /** Requests queued in the lane (weights the fleet's fair share). */
  backlog: number
}

/** What the driver needs from a limiter. */
export interface TelemetrySource {
  /** The live lanes. */
  lanes(): Iterable<TelemetryLane>
  /** Optional: called on every 429 so the report goes out now instead of at the next tick. */
  onThrottled?(listener: () => void): () => void
}

export interface TelemetryDriverOptions {
  source: TelemetrySource
  link: TelemetryLink
  /** Stable id of this client (browser profile, worker, process). Default: a random UUID. */
  clientId?: string
  /** Epoch ms. Default Date.now. */
  now?: () => number
  /** How often due reports are looked for. Default 1 000 ms. */
  tickMs?: number
  timer?: LinkTimer
  /**
   * Reports this client starts a second, over all its lanes, sustained; due lanes beyond it
   * wait for a later tick, the longest due first. Default 1.5: under the endpoint's default
   * per-client limit of 2/s, with room for reports that reach it closer together than they left.
   */
  reportsPerSecond?: number
  /** Reports started at once. Default 8 (the endpoint's burst is 10). */
  reportBurst?: number
}

interface DueLane { lane: TelemetryLane; pacer: Pacer; dueAt: number }

export interface TelemetryDriver {
  /** Look for due reports now (also what the timer calls). Resolves when this tick's replies are in. */
  tick(): Promise<void>
  start(): void
  stop(): void
  readonly clientId: string
  /** Reports sent, and how many came back without an aggregate. */
  stats(): { sent: number; failed: number }
}

const defaultTimer: LinkTimer = {
  set: (callback, ms) => {
    const handle = setTimeout(callback, ms)
    // Node: reporting alone must not keep a process alive.
    ;(handle as { unref?: () => void }).unref?.()
    return handle
  },
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
}

/**
 * The backlog as the protocol takes it: a whole number up to MAX_REPORT_BACKLOG. A crawler's lane
 * with 2,000,000 queued requests sent 2,000,000, which the link's own validation refused: the
 * lane never reported while its queue was that long. (The server weighs any backlog over 16 alike.)
 */
function reportedBacklog(backlog: number): number {
  return backlog > 0 ? Math.min(MAX_REPORT_BACKLOG, Math.floor(backlog)) : 0
}

function randomId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  return crypto?.randomUUID?.() ?? `c${Math.floor(Math.random() * 2 ** 52).toString(36)}`
}

export function createTelemetryDriver(options: TelemetryDriverOptions): TelemetryDriver {
  const { source, link } = options
  const clientId = options.clientId ?? randomId()
  const now = options.now ?? Date.now
  const tickMs = timerDelayMs(options.tickMs, 1_000)
  const timer = options.timer ?? defaultTimer
  const inFlight = new Set<string>()
  const budget = createReportBudget({ perSecond: options.reportsPerSecond ?? 1.5, burst: options.reportBurst ?? 8 })
  let handle: unknown
  let running = false
  let unsubscribe: (() => void) | undefined
  let sent = 0
  let failed = 0
  // Aborted by stop(): reports still in flight end then, not at their timeout.
  let stopping = new AbortController()

  function sendDue(): Promise<void>[] {
    const pending: Promise<void>[] = []
    if (stopping.signal.aborted) return pending // stopped: a report taken now could only be dropped
    const at = now()
    // No report may start: no lane need be looked at (a 429 storm over 10,000 lanes looked at
    // every lane on every 429, 13 ms each).
    const room = budget.available(at)
    if (room < 1) return pending
    // The `room` lanes due longest, earliest first: a lane the budget held back goes before
    // those that came due since. Kept by insertion (room is at most the burst), not a sort of all.
    const due: DueLane[] = []
    for (const lane of source.lanes()) {
      const pacer = lane.pacer
      if (!pacer?.takeReport || !pacer.reportDueAt || inFlight.has(lane.scope)) continue
      let dueAt
      try {
        dueAt = pacer.reportDueAt(at, lane.backlog)
      } catch {
        continue // a faulty pacer must not stop the others' reports
      }
      if (!(dueAt <= at) || (due.length === room && dueAt >= due[room - 1]!.dueAt)) continue
      let i = due.length
      while (i > 0 && due[i - 1]!.dueAt > dueAt) i--
      due.splice(i, 0, { lane, pacer, dueAt })
      if (due.length > room) due.pop()
    }
    for (const { lane, pacer } of due) {
      if (inFlight.has(lane.scope)) continue // two lanes of one scope listed: one report
      if (!budget.take(at)) break
      let report
      try {
        report = pacer.takeReport!(at)
      } catch {
        continue
      }
      if (!report) continue
      inFlight.add(lane.scope)
      sent++
      const body = { scope: lane.scope, clientId, attempts: report.attempts, throttled: report.throttled, backlog: reportedBacklog(lane.backlog) }
      let sending: Promise<Aggregate | undefined>
      try {
        sending = link.report(report.quota ? { ...body, quota: report.quota } : body, stopping.signal)
      } catch (error) {
        sending = Promise.reject(error)
      }
      // A link of the user's may break "never rejects": that is a failed report, not an unhandled
      // rejection out of the tick timer, nor a lane left "in flight" (and so silent) for good.
      pending.push(sending.catch(() => undefined).then((aggregate) => {
        inFlight.delete(lane.scope)
        if (!aggregate) {
          failed++
          return
        }
        try {
          pacer.onAggregate?.(now(), aggregate)
        } catch {
          // ignore: telemetry is advisory
        }
      }))
    }
    return pending
  }

  function schedule(): void {
    if (!running) return
    handle = timer.set(() => {
      handle = undefined
      sendDue()
      schedule()
    }, tickMs)
  }

  return {
    clientId,
    async tick() {
      await Promise.all(sendDue())
    },
    start() {
      if (running) return
      running = true
      if (stopping.signal.aborted) stopping = new AbortController()
      // A microtask later: the event may fire before the pacer has taken the 429 in.
      // One look per turn however many 429s it brought.
      let queued = false
      unsubscribe = source.onThrottled?.(() => {
        if (queued) return
        queued = true
        queueMicrotask(() => { queued = false; if (running) sendDue() })
      })
      schedule()
    },
    stop() {
      running = false
      if (handle !== undefined) timer.clear(handle)
      handle = undefined
      unsubscribe?.()
      unsubscribe = undefined
      stopping.abort()
    },
    stats: () => ({ sent, failed }),
  }
}
