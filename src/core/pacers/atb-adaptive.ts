// polite-fetch's default ATB pacer. See docs/algorithms.md for the reasoning; in short:
// - free until the lane has seen congestion (429/503) or a quota hint;
// - server guidance first: Retry-After gates the lane; with an announced quota rate the lane
//   keeps to its share of what the fleet may spend (atb-quota.ts), otherwise remaining/reset
//   is spread when the current pace would exhaust it;
// - status-only inference: a token bucket whose rate is bounded by what the lane has
//   actually been getting through, falls back to the admitted rate on a 429 (once per
//   flight of in-flight requests; the first paced send drawn within one spacing), and
//   grows slowly with time — not per success — while the lane is using its rate, more
//   slowly still on a plateau near the rate of its last cut.
import type { Pacer, PacerInit, PacerState, Signal } from '../types.js'
import {
  absorbGuidance,
  emptyGuidance,
  explainedByQuota,
  gateDelayMs,
  MAX_GUIDANCE_AHEAD_MS,
  noteSent,
  spreadDelayMs,
  type QuotaGuidance,
} from './atb-quota.js'
import { createOutcomeLog } from './atb-rate.js'
import { finiteIn, matchingState, pastTime } from './pacer-state.js'
import type { ResolvedAtbOptions } from './atb-options.js'

export const ATB_KIND = 'atb'
const STATE_VERSION = 1
const EPSILON = 1e-9
const LOG_ENTRIES = 256
const SEND_LOG_ENTRIES = 64

export function createAtbPacer(o: ResolvedAtbOptions, init: PacerInit): Pacer {
  const saved = matchingState(init.state, ATB_KIND, STATE_VERSION)
  const now0 = init.now
  const random = init.random

  let congested = false
  let lastCongestionAt = 0
  let congestedSince = 0
  let rate = Infinity
  let shareEstimate = 0
  /** The rate the lane was pacing at when congestion last hit (0 before a paced lane was cut). */
  let congestionRate = 0
  let tokens = o.burstUnits
  let refilledAt = now0
  let createdAt = now0
  /** Throttled results still expected from attempts in flight when the rate was last cut. */
  let echoesToIgnore = 0
  let inFlight = 0
  let lastSendAt: number | undefined
  const sendTimes: number[] = []
  const sendCosts: number[] = []
  let guidance: QuotaGuidance = emptyGuidance()
  let log = createOutcomeLog(LOG_ENTRIES)

  const restored = saved ? parseState(saved, o, now0) : undefined
  if (restored) {
    ;({ congested, rate, shareEstimate, congestionRate, tokens, lastCongestionAt, congestedSince, createdAt, guidance } = restored)
    refilledAt = restored.savedAt // tokens were counted up to the save; the gap since refills them
    log = createOutcomeLog(LOG_ENTRIES, restored.log)
    for (const [time, cost] of restored.sends) {
      sendTimes.push(time)
      sendCosts.push(cost)
    }
    lastSendAt = sendTimes[sendTimes.length - 1]
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

  /**
   * Near the rate at which the lane was last cut, and soon after it, growth slows (a plateau,
   * as TCP CUBIC's): in an overloaded fleet the capacity has not moved, so probing it again at
   * full speed only buys the next 429. Far from it, or once the plateau has lasted
   * `plateauMs` without a 429 (capacity may have freed up), growth is at full speed again.
   */
  const onPlateau = (now: number): boolean => {
    const reference = congestionRate > 0 ? congestionRate : shareEstimate
    return now - lastCongestionAt < o.plateauMs && Math.abs(rate - reference) < o.plateauBand * reference
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
    const first = !congested
    congestionRate = congested ? rate : 0
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
    rate = Math.min(o.maxRatePerSecond, Math.max(o.minRatePerSecond, next))
    shareEstimate = rate
    congested = true
    lastCongestionAt = now
    tokens = Math.min(0, available(now))
    if (first && o.jitterFirstCut) {
      // The lane's first cut usually comes with everybody's (the quota ran dry for the whole
      // fleet at once): the first paced send waits a uniform share of one spacing, not a full
      // one, so the fleet's retries spread over the spacing instead of landing together —
      // and a light lane, whose spacing is long, waits half of it on average.
      tokens = Math.max(tokens, 1 - random())
    }
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
          const g = onPlateau(now) ? o.growthPerSecond * o.plateauGrowthFactor : o.growthPerSecond
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
        // A 429 that a continuously refilling quota explains (nothing left) is the quota
        // pacing's business: it knows the rate and reads the fleet. Any other 429 (units left,
        // or a window or stepped quota whose count says little between refills) is evidence
        // for status-only inference.
        if (!(explainedByQuota(signal) && guidance.continuous)) congestionEvent(now)
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
        delay = Math.max(delay, Math.min(signal.retryAt - now, MAX_GUIDANCE_AHEAD_MS))
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
        congestionRate,
        tokens: Number.isFinite(rate) ? available(now) : null,
        lastCongestionAt,
        congestedSince,
        retryAt: guidance.retryAt,
        remaining: guidance.remaining ?? null,
        resetAt: guidance.resetAt ?? null,
        sentSinceHint: guidance.sentSinceHint,
        log: log.toJSON().filter(([t]) => t <= now),
        sends: sendTimes.flatMap((t, i) => (t <= now ? [[t, sendCosts[i] as number]] : [])),
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

interface Restored {
  savedAt: number
  congested: boolean
  rate: number
  shareEstimate: number
  congestionRate: number
  tokens: number
  lastCongestionAt: number
  congestedSince: number
  createdAt: number
  guidance: QuotaGuidance
  log: Array<[number, number]>
  sends: Array<[number, number]>
}

/**
 * Validate a saved state. Anything written "in the future" (clock skew, another device)
 * or out of range means the state is not trusted at all: starting fresh costs at most a
 * 429, resuming from nonsense could stall the lane.
 */
function parseState(state: PacerState, o: ResolvedAtbOptions, now: number): Restored | undefined {
  const savedAt = pastTime(state.savedAt, now)
  if (savedAt === undefined) return undefined
  const createdAt = pastTime(state.createdAt, now)
  if (createdAt === undefined || !Array.isArray(state.log)) return undefined
  const log: Array<[number, number]> = []
  let previous = -Infinity
  for (const entry of state.log.slice(-LOG_ENTRIES)) {
    const time = Array.isArray(entry) ? pastTime(entry[0], now) : undefined
    if (time === undefined || time < previous) return undefined
    previous = time
    log.push([time, entry[1] === 1 ? 1 : 0])
  }
  const sends: Array<[number, number]> = []
  previous = -Infinity
  for (const entry of Array.isArray(state.sends) ? state.sends.slice(-SEND_LOG_ENTRIES) : []) {
    const time = Array.isArray(entry) ? pastTime(entry[0], now) : undefined
    const cost = Array.isArray(entry) ? finiteIn(entry[1], 0, Number.MAX_SAFE_INTEGER) : undefined
    if (time === undefined || cost === undefined || time < previous) return undefined
    previous = time
    sends.push([time, cost])
  }
  const guidance = emptyGuidance()
  // A gate may lie in the future by design, but never further than a server could plausibly ask.
  const retryAt = finiteIn(state.retryAt, 0, savedAt + MAX_GUIDANCE_AHEAD_MS)
  if (retryAt === undefined) return undefined
  guidance.retryAt = retryAt
  const remaining = finiteIn(state.remaining, 0, Number.MAX_SAFE_INTEGER)
  const resetAt = finiteIn(state.resetAt, 0, savedAt + MAX_GUIDANCE_AHEAD_MS)
  if (remaining !== undefined && resetAt !== undefined) {
    guidance.remaining = remaining
    guidance.resetAt = resetAt
    guidance.hintAt = savedAt
    guidance.sentSinceHint = finiteIn(state.sentSinceHint, 0, Number.MAX_SAFE_INTEGER) ?? 0
  }
  const base = { savedAt, createdAt, guidance, log, sends, lastCongestionAt: 0, congestedSince: 0 }
  if (state.congested !== true) {
    return { ...base, congested: false, rate: Infinity, shareEstimate: 0, congestionRate: 0, tokens: o.burstUnits }
  }
  const rate = finiteIn(state.rate, o.minRatePerSecond, o.maxRatePerSecond)
  const lastCongestionAt = pastTime(state.lastCongestionAt, now)
  const congestedSince = pastTime(state.congestedSince, now)
  const shareEstimate = finiteIn(state.shareEstimate, 0, o.maxRatePerSecond)
  // Debt is legitimate (a costly attempt), but never more than one burst's worth.
  const tokens = finiteIn(state.tokens, -o.burstUnits, o.burstUnits)
  if (rate === undefined || lastCongestionAt === undefined || congestedSince === undefined) return undefined
  if (shareEstimate === undefined || tokens === undefined) return undefined
  // Optional (older states lack it): without it the plateau centres on the share estimate.
  const congestionRate = finiteIn(state.congestionRate, 0, o.maxRatePerSecond) ?? 0
  return { ...base, congested: true, rate, shareEstimate, congestionRate, tokens, lastCongestionAt, congestedSince }
}
