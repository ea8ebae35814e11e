// Drives AATB reporting for a limiter's lanes: every tick it asks each lane's pacer
// whether a report is due (`reportDueAt`: every report window, and promptly after a
// 429), sends `takeReport`'s counts with the lane's scope, client id and backlog
// through the link, and hands the reply to `pacer.onAggregate`. Fire and forget: no
// request waits for it, at most one report per lane is in flight, and a failed report
// (the link resolves undefined) changes nothing — the pacer keeps pacing locally.
import type { Aggregate, Pacer, PacerReport } from '../core/types.js'
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

/** Departed lanes' last reports kept while the budget holds them back. */
const MAX_DEPARTED = 1_000

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

  // The lanes with a reporting pacer seen at the last look, by scope, and the look they were seen
  // at. A lane the limiter has evicted since (gone from lanes(), or its scope on a new pacer) took
  // its unreported counts with it: with the endpoint's window at 8 min (docs/telemetry.md's size
  // for GitHub's 5,000 an hour) and lanes forgotten after 60 s idle, a lane that worked 5 min had
  // 99 of its 100 attempts never reported. Its last counts are taken when it is found gone.
  const seen = new Map<string, { pacer: Pacer; look: number }>()
  let look = 0
  /** Last reports of departed lanes, waiting for the budget; the oldest are dropped beyond MAX_DEPARTED. */
  const departed: { scope: string; report: PacerReport }[] = []

  function depart(scope: string, pacer: Pacer, at: number): void {
    let report: PacerReport | undefined
    try {
      report = pacer.takeReport!(at)
    } catch {
      return
    }
    if (report === undefined || (report.attempts === 0 && report.throttled === 0)) return
    if (departed.length >= MAX_DEPARTED) departed.shift()
    departed.push({ scope, report })
  }

  function send(scope: string, report: PacerReport, backlog: number, pacer: Pacer | undefined, pending: Promise<void>[]): void {
    // A departed lane's report neither holds its scope "in flight" (a new lane may have it) nor feeds a pacer.
    if (pacer !== undefined) inFlight.add(scope)
    sent++
    const body = { scope, clientId, attempts: report.attempts, throttled: report.throttled, backlog: reportedBacklog(backlog) }
    let sending: Promise<Aggregate | undefined>
    try {
      sending = link.report(report.quota ? { ...body, quota: report.quota } : body, stopping.signal)
    } catch (error) {
      sending = Promise.reject(error)
    }
    // A link of the user's may break "never rejects": that is a failed report, not an unhandled
    // rejection out of the tick timer, nor a lane left "in flight" (and so silent) for good.
    pending.push(sending.catch(() => undefined).then((aggregate) => {
      if (pacer !== undefined) inFlight.delete(scope)
      if (!aggregate) {
        failed++
        return
      }
      try {
        pacer?.onAggregate?.(now(), aggregate)
      } catch {
        // ignore: telemetry is advisory
      }
    }))
  }

  function sendDue(): Promise<void>[] {
    const pending: Promise<void>[] = []
    if (stopping.signal.aborted) return pending // stopped: a report taken now could only be dropped
    const at = now()
    // No report may start: no lane need be looked at (a 429 storm over 10,000 lanes looked at
    // every lane on every 429, 13 ms each).
    const room = budget.available(at)
    if (room < 1) return pending
    look++
    // The `room` lanes due longest, earliest first: a lane the budget held back goes before
    // those that came due since. Kept by insertion (room is at most the burst), not a sort of all.
    const due: DueLane[] = []
    for (const lane of source.lanes()) {
      const pacer = lane.pacer
      if (!pacer?.takeReport || !pacer.reportDueAt) continue
      const known = seen.get(lane.scope)
      if (known === undefined) seen.set(lane.scope, { pacer, look })
      else {
        if (known.pacer !== pacer) {
          depart(lane.scope, known.pacer, at) // evicted and made anew between two looks
          known.pacer = pacer
        }
        known.look = look
      }
      if (inFlight.has(lane.scope)) continue
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
    for (const [scope, known] of seen) {
      if (known.look === look) continue
      seen.delete(scope)
      depart(scope, known.pacer, at)
    }
    // Departed lanes first: they will not be due again.
    while (departed.length > 0 && budget.take(at)) {
      const { scope, report } = departed.shift()!
      send(scope, report, 0, undefined, pending)
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
      send(lane.scope, report, lane.backlog, pacer, pending)
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
