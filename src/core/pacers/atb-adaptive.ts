// polite-fetch's default ATB pacer. See docs/algorithms.md for the reasoning; in short:
// - free until the lane has seen congestion (429/503) or a quota hint;
// - server guidance first: Retry-After gates the lane, remaining/reset is spread when the
//   current pace would exhaust it;
// - status-only inference: a token bucket whose rate is bounded by what the lane has
//   actually been getting through, falls back to the admitted rate on a 429 (once per
//   flight of in-flight requests), and grows slowly with time — not per success — while
//   the lane is using its rate.
import type { Pacer, PacerInit, PacerState, Signal } from '../types.js'
import {
  absorbGuidance,
  emptyGuidance,
  gateDelayMs,
  hasLiveHint,
  noteSent,
  spreadDelayMs,
  type QuotaGuidance,
} from './atb-quota.js'
import { createOutcomeLog } from './atb-rate.js'
import { finiteIn, matchingState, pastTime, pastTimes } from './pacer-state.js'
import type { ResolvedAtbOptions } from './atb-options.js'

export const ATB_KIND = 'atb'
const STATE_VERSION = 1
const EPSILON = 1e-9
const LOG_ENTRIES = 256
const SEND_LOG_ENTRIES = 64

export function createAtbPacer(o: ResolvedAtbOptions, init: PacerInit): Pacer {
  const saved = matchingState(init.state, ATB_KIND, STATE_VERSION)
  const now0 = init.now

  let congested = false
  let lastCongestionAt = 0
  let congestedSince = 0
  let rate = Infinity
  let shareEstimate = 0
  let rateBeforeCut = 0
  let tokens = o.burstUnits
  let refilledAt = now0
  let createdAt = now0
  /** Throttled results still expected from attempts in flight when the rate was last cut. */
  let echoesToIgnore = 0
  let inFlight = 0
  let lastSendAt: number | undefined
  const sendTimes: number[] = []
  const sendCosts: number[] = []
  const guidance: QuotaGuidance = emptyGuidance()
  let log = createOutcomeLog(LOG_ENTRIES)

  const resumed = saved ? resume(saved) : false
  if (!resumed) log = createOutcomeLog(LOG_ENTRIES)

  function resume(state: PacerState): boolean {
    const savedAt = pastTime(state.savedAt, now0)
    if (savedAt === undefined) return false
    const entries = Array.isArray(state.log) ? state.log : []
    const times = pastTimes(entries.map((e: unknown) => (Array.isArray(e) ? e[0] : undefined)), now0, LOG_ENTRIES)
    if (times === undefined) return false
    log = createOutcomeLog(
      LOG_ENTRIES,
      times.map((t, i) => [t, (entries[i] as unknown[])[1] === 1 ? 1 : 0]),
    )
    createdAt = pastTime(state.createdAt, now0) ?? now0
    if (state.congested === true) {
      const r = finiteIn(state.rate, o.minRatePerSecond, o.maxRatePerSecond)
      const at = pastTime(state.lastCongestionAt, now0)
      if (r === undefined || at === undefined) return false
      congested = true
      rate = r
      lastCongestionAt = at
      congestedSince = pastTime(state.congestedSince, now0) ?? at
      shareEstimate = finiteIn(state.shareEstimate, 0, o.maxRatePerSecond) ?? r
      tokens = Math.min(o.burstUnits, finiteIn(state.tokens, -1e6, o.burstUnits) ?? 0)
      refilledAt = pastTime(state.refilledAt, now0) ?? now0
    }
    // Gates may lie in the future by design, but only within the plausibility horizon.
    const retryAt = finiteIn(state.retryAt, 0, now0 + 86_400_000)
    if (retryAt !== undefined) guidance.retryAt = retryAt
    return true
  }

  const available = (now: number): number => {
    if (!Number.isFinite(rate)) return Infinity
    return Math.min(o.burstUnits, tokens + (Math.max(0, now - refilledAt) / 1000) * rate)
  }

  const pacePerSecond = (now: number): number => {
    let units = 0
    for (let i = sendTimes.length - 1; i >= 0; i--) {
      if ((sendTimes[i] as number) <= now - o.paceWindowMs) break
      units += sendCosts[i] as number
    }
    return units / (o.paceWindowMs / 1000)
  }

  /** The most the rate may be: a margin over what the lane has been getting through. */
  const ceiling = (now: number): number => {
    const admitted = log.admittedPerSecond(now, o.windowMs, createdAt, o.minSpanMs, o.minSamples)
    return Math.min(o.maxRatePerSecond, Math.max(o.minRatePerSecond, o.rateMargin * Math.max(admitted, shareEstimate)))
  }

  const calm = (now: number): boolean => congested && now - lastCongestionAt >= o.calmAfterMs

  function becomeCalm(): void {
    congested = false
    rate = Infinity
    tokens = o.burstUnits
  }

  function congestionEvent(now: number): void {
    if (echoesToIgnore > 0) {
      // A throttled answer to an attempt sent before the last cut: the cut already covered it.
      echoesToIgnore--
      return
    }
    const since = congested ? congestedSince : createdAt
    const admitted = log.admittedPerSecond(now, o.windowMs, since, o.minSpanMs, o.minSamples)
    let next: number
    if (!congested) {
      // No rate yet: start from what got through, and at most half of what was sent.
      const sent = log.counts(now, Math.max(o.minSpanMs, Math.min(o.windowMs, now - createdAt)))
      const span = Math.max(o.minSpanMs, Math.min(o.windowMs, now - createdAt)) / 1000
      const attempted = (sent.admitted + sent.rejected) / span
      next = Math.min(o.fallbackFactor * admitted, o.firstCutFactor * attempted)
      congestedSince = now
    } else {
      next = Math.min(rate * o.maxCutFactor, o.fallbackFactor * admitted)
    }
    rateBeforeCut = congested ? rate : 0
    rate = Math.min(o.maxRatePerSecond, Math.max(o.minRatePerSecond, next))
    shareEstimate = rate
    congested = true
    lastCongestionAt = now
    tokens = Math.min(0, available(now))
    refilledAt = now
    echoesToIgnore = Math.max(0, inFlight)
  }

  return {
    delayMs(now, cost) {
      const units = Math.max(0, cost)
      const gate = o.honourRetryAfter ? gateDelayMs(guidance, now, units) : 0
      if (gate > 0) return Math.ceil(gate)
      const spread = spreadDelayMs(guidance, now, units, pacePerSecond(now), lastSendAt)
      if (!congested || calm(now)) return Math.ceil(spread)
      const need = Math.min(units, o.burstUnits)
      const have = available(now)
      const paced = have >= need - EPSILON ? 0 : ((need - have) / rate) * 1000
      return Math.ceil(Math.max(paced, spread))
    },
    onSend(now, cost) {
      const units = Math.max(0, cost)
      if (calm(now)) becomeCalm()
      if (congested) {
        const have = available(now)
        // Grow with time, and only while the lane is using its rate (it sent about as soon
        // as it could): an idle lane earns no growth, so a quiet spell cannot end in a burst.
        const gapMs = lastSendAt === undefined ? Infinity : now - lastSendAt
        if (gapMs <= o.usingRateSlack * ((units || 1) / rate) * 1000) {
          // Regain quickly what the last cut took (a stepped quota comes back all at once),
          // then probe slowly past the rate that last met congestion.
          const g = rate < o.recoverTo * rateBeforeCut ? o.recoveryPerSecond : o.growthPerSecond
          rate = Math.min(o.maxRatePerSecond, rate * Math.exp(g * (gapMs / 1000)))
        } else {
          // Back from a quiet spell: no more than a margin over what has been getting through.
          rate = Math.min(rate, ceiling(now))
        }
        tokens = have - units
        refilledAt = now
      }
      inFlight++
      noteSent(guidance, units)
      lastSendAt = lastSendAt === undefined ? now : Math.max(lastSendAt, now)
      sendTimes.push(now)
      sendCosts.push(units)
      if (sendTimes.length > SEND_LOG_ENTRIES) {
        sendTimes.shift()
        sendCosts.shift()
      }
    },
    onResult(now, signal: Signal) {
      inFlight = Math.max(0, inFlight - 1)
      if (o.honourRetryAfter) absorbGuidance(guidance, now, signal)
      else if (signal.remaining !== undefined) absorbGuidance(guidance, now, { ...signal, retryAt: undefined })
      if (signal.kind === 'ok') {
        log.add(now, true)
        if (echoesToIgnore > 0 && inFlight < echoesToIgnore) echoesToIgnore = inFlight
      } else if (signal.kind === 'throttled' || signal.kind === 'overloaded') {
        log.add(now, false)
        if (calm(now)) becomeCalm()
        congestionEvent(now)
      }
      // 'error': a transport failure says nothing about the quota.
    },
    retryDelayMs(now, failures, signal) {
      let delay = 0
      if (congested && (signal.kind === 'throttled' || signal.kind === 'overloaded') && failures > 1) {
        // Repeated 429s for one request: space its retries exponentially in units of the
        // lane's spacing, on top of the lane gate (which already gives one spacing).
        const spacingMs = 1000 / rate
        delay = Math.min(o.maxRetryBackoffMs, (2 ** Math.min(failures - 1, 30) - 1) * spacingMs * o.retryBackoffFactor)
      }
      if (o.honourRetryAfter && signal.retryAt !== undefined && Number.isFinite(signal.retryAt)) {
        delay = Math.max(delay, Math.min(signal.retryAt - now, 86_400_000))
      }
      return Math.max(0, delay)
    },
    toJSON(now): PacerState {
      return {
        kind: ATB_KIND,
        version: STATE_VERSION,
        savedAt: now,
        createdAt: Math.min(createdAt, now),
        congested,
        rate: Number.isFinite(rate) ? rate : null,
        shareEstimate,
        tokens: Number.isFinite(rate) ? available(now) : null,
        refilledAt: now,
        lastCongestionAt,
        congestedSince,
        retryAt: guidance.retryAt,
        log: log.toJSON().filter(([t]) => t > now - o.windowMs && t <= now),
      }
    },
    get ratePerSecond() {
      return congested ? rate : Infinity
    },
    tokens(now) {
      return congested ? available(now) : Infinity
    },
  }
}

export { hasLiveHint }
