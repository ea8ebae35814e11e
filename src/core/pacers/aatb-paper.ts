// The paper's AATB client (AATB.py, configs/AATB/config1.json; algorithms.md §4.4), every
// constant an option. Kept faithful for the benchmarks, with three documented changes
// forced by the Pacer contract (pure, never blocking):
// - The paper blocks up to 3 s for the reply to a congestion report. Here the congestion
//   rules run at once with the last aggregate (what the paper does on a timeout) and are
//   re-run with the fresh aggregate if its reply arrives within `replyTimeoutMs` and
//   before the next send (what the paper does when the reply arrives in time).
// - The routine update runs when the driver calls `takeReport` at `reportDueAt`
//   (every report window from creation, like APScheduler's interval timer).
// - Tokens that accumulate while a gate holds the lane are dropped, as the paper's
//   `acquire` does by sleeping first and spending the pre-sleep tokens.
import type { Aggregate, Pacer, PacerInit, PacerReport, PacerState, Random, Signal } from '../types.js'
import { roundTo } from './pacer-state.js'

export const PAPER_AATB_KIND = 'aatb-paper'
const STATE_VERSION = 1

export interface PaperAatbOptions {
  /** B. Default 40. */
  bucketSize?: number
  /** b0. Default 1. */
  initialTokens?: number
  /** r0 per minute (converted like the paper: max(round(r0/60, 2), 0.01)). Default 40. */
  initialRatePerMinute?: number
  /** Increase factor of a light client. Default 1.4. */
  stepOne?: number
  /** Increase factor of a heavy client. Default 1.2. */
  stepTwo?: number
  /** Report period and minimum time between increases. Default 30 000 ms. */
  reportWindowMs?: number
  /** Rate floor (tokens/s). Default 0.01. */
  minRatePerSecond?: number
  /** Minimum additive increase (tokens/s). Default 0.01. */
  minIncreasePerSecond?: number
  /** Below this share of the average load a congested client halves, above it divides by `heavyDivisor`. Default 0.5. */
  lightShare?: number
  /** Divisor of a light client's rate on congestion. Default 2. */
  lightDivisor?: number
  /** Divisor of a heavy client's rate on congestion. Default 3. */
  heavyDivisor?: number
  /** Below this share of the average load a client increases by `stepOne`. Default 0.75. */
  increaseShare?: number
  /** Tokens right after a congestion event. Default 1.1. */
  tokensAfterCongestion?: number
  /** Upper bound of the U(0, x) jitter added to a congestion wait, ms. Default 1 000. */
  retryJitterMs?: number
  /** Half-width of the U(−x, x) jitter of the fleet-congestion pause, ms. Default 2 000. */
  pauseJitterMs?: number
  /** Quota rate assumed before the first aggregate (the paper's initial `token_rate`), per minute. Default 15. */
  initialQuotaPerMinute?: number
  /** How long the paper waits for the aggregator's reply. Default 3 000 ms. */
  replyTimeoutMs?: number
}

export const PAPER_AATB_DEFAULTS: Required<PaperAatbOptions> = {
  bucketSize: 40,
  initialTokens: 1,
  initialRatePerMinute: 40,
  stepOne: 1.4,
  stepTwo: 1.2,
  reportWindowMs: 30_000,
  minRatePerSecond: 0.01,
  minIncreasePerSecond: 0.01,
  lightShare: 0.5,
  lightDivisor: 2,
  heavyDivisor: 3,
  increaseShare: 0.75,
  tokensAfterCongestion: 1.1,
  retryJitterMs: 1_000,
  pauseJitterMs: 2_000,
  initialQuotaPerMinute: 15,
  replyTimeoutMs: 3_000,
}

/** The paper's `ReceivedData`. */
interface Received { totalRequests: number; activeClients: number; reported429: number; tokenRatePerMinute: number }

interface Congestion { at: number; rateBefore: number; attempts: number; jitterMs: number }

export function createPaperAatbPacer(o: Required<PaperAatbOptions>, init: PacerInit): Pacer {
  const random: Random = init.random
  const round2 = (value: number) => roundTo(value, 2)
  let rate = Math.max(round2(o.initialRatePerMinute / 60), o.minRatePerSecond)
  let tokens = o.initialTokens
  let lastUsed = init.now
  let sent = 0
  let lastCongestionAt = -Infinity
  let lastRateChange = init.now
  let gateUntil = 0
  let gateSetAt = 0
  let received: Received = { totalRequests: 0, activeClients: 0, reported429: 0, tokenRatePerMinute: o.initialQuotaPerMinute }
  let nextRoutineAt = init.now + o.reportWindowMs
  /** Congestion events not yet reported, and their attempt count. */
  let unreportedThrottles = 0
  let unreportedAttempts = 0
  let lastCongestion: Congestion | undefined
  let awaiting: { kind: 'congestion'; sentAt: number } | { kind: 'routine'; sentAt: number; attempts: number } | undefined
  let sendsSinceCongestion = 0

  const saved = init.state
  if (saved && saved.kind === PAPER_AATB_KIND && saved.version === STATE_VERSION) {
    const r = saved.rate
    if (typeof r === 'number' && Number.isFinite(r) && r >= o.minRatePerSecond && r < 1e9) rate = r
  }

  function refill(now: number): number {
    return Math.min(o.bucketSize, tokens + (Math.max(0, now - lastUsed) * rate) / 1000)
  }

  function applyCongestion(c: Congestion): void {
    const active = Math.max(1, received.activeClients)
    const avgRequests = received.totalRequests / active
    const k = received.reported429 + 1
    const waitSeconds = round2((k * 60) / received.tokenRatePerMinute + c.jitterMs / 1000)
    const divisor = c.attempts < o.lightShare * avgRequests ? o.lightDivisor : o.heavyDivisor
    rate = Math.max(o.minRatePerSecond, round2(c.rateBefore / divisor))
    tokens = o.tokensAfterCongestion
    lastUsed = c.at
    lastRateChange = c.at
    gateUntil = c.at + waitSeconds * 1000
    gateSetAt = c.at
  }

  function routineUpdate(now: number, attempts: number): void {
    if (received.reported429 > 0) {
      gateUntil = now + o.reportWindowMs + (random() * 2 - 1) * o.pauseJitterMs
      gateSetAt = now
      return
    }
    if (now - lastRateChange < o.reportWindowMs) return
    const active = Math.max(1, received.activeClients)
    const avgLoad = received.totalRequests / active
    const light = attempts < o.increaseShare * avgLoad || active === 1 || avgLoad === 0
    const step = light ? o.stepOne : o.stepTwo
    rate = round2(Math.max(rate * step, rate + o.minIncreasePerSecond))
    lastRateChange = now
  }

  return {
    delayMs(now) {
      const available = refill(now)
      const tokenWait = available >= 1 ? 0 : ((1 - available) / rate) * 1000
      return Math.max(0, tokenWait, gateUntil - now)
    },
    onSend(now) {
      // A gate makes the paper sleep first and then spend the tokens it had before the sleep.
      const available = gateUntil > 0 && now >= gateSetAt ? refill(Math.min(now, Math.max(gateSetAt, lastUsed))) : refill(now)
      tokens = Math.max(available - 1, 0)
      lastUsed = now
      gateUntil = 0
      sent++
      sendsSinceCongestion++
    },
    onResult(now, signal: Signal) {
      if (signal.kind !== 'throttled' && signal.kind !== 'overloaded') return
      lastCongestionAt = now
      unreportedThrottles++
      unreportedAttempts += sent
      const c: Congestion = { at: now, rateBefore: rate, attempts: sent, jitterMs: random() * o.retryJitterMs }
      sent = 0
      lastCongestion = c
      sendsSinceCongestion = 0
      applyCongestion(c)
    },
    reportDueAt(now) {
      return unreportedThrottles > 0 ? now : nextRoutineAt
    },
    takeReport(now): PacerReport | undefined {
      if (unreportedThrottles > 0) {
        const report = { attempts: Math.max(unreportedAttempts, unreportedThrottles), throttled: unreportedThrottles }
        unreportedThrottles = 0
        unreportedAttempts = 0
        awaiting = { kind: 'congestion', sentAt: now }
        return report
      }
      if (now < nextRoutineAt) return undefined
      while (nextRoutineAt <= now) nextRoutineAt += o.reportWindowMs
      // The paper skips its routine update while it was congested within the last window.
      if (now - lastCongestionAt < o.reportWindowMs) return undefined
      const attempts = sent
      sent = 0
      awaiting = { kind: 'routine', sentAt: now, attempts }
      return { attempts, throttled: 0 }
    },
    onAggregate(now, aggregate: Aggregate) {
      const pending = awaiting
      awaiting = undefined
      if (!(aggregate.activeClients >= 0) || !(aggregate.totalAttempts >= 0) || !(aggregate.throttledReports >= 0)) return
      const quota = aggregate.quotaPerSecond
      received = {
        totalRequests: aggregate.totalAttempts,
        activeClients: aggregate.activeClients,
        reported429: aggregate.throttledReports,
        tokenRatePerMinute: quota !== undefined && quota > 0 && Number.isFinite(quota) ? quota * 60 : received.tokenRatePerMinute,
      }
      if (!pending || now - pending.sentAt > o.replyTimeoutMs) return
      if (pending.kind === 'congestion') {
        if (lastCongestion && sendsSinceCongestion === 0) applyCongestion(lastCongestion)
      } else {
        routineUpdate(now, pending.attempts + sent)
      }
    },
    toJSON(now): PacerState {
      return { kind: PAPER_AATB_KIND, version: STATE_VERSION, savedAt: now, rate }
    },
    get ratePerSecond() {
      return rate
    },
    tokens: (now) => refill(now),
  }
}
