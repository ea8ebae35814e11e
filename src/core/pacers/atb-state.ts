// The default ATB's saved state, read back. A lane's pacer is saved (IndexedDB, a file, the
// service worker's store) and resumed on the next page or run; what comes back may be from
// another version, another device's clock or a hostile writer, so every field is checked and
// anything implausible means the lane starts fresh.
import type { PacerState } from '../types.js'
import { emptyGuidance, MAX_GUIDANCE_AHEAD_MS, type QuotaGuidance } from './atb-quota.js'
import { parseTimeScale, type TimeScaleState } from './atb-time-scale.js'
import type { ResolvedAtbOptions } from './atb-options.js'
import { finiteIn, pastTime } from './pacer-state.js'

/** The saved state's layout version: a state of another version is not resumed. */
export const STATE_VERSION = 1
/** Outcomes (admitted or refused) the lane remembers, and saves. */
export const LOG_ENTRIES = 256
/** Sends (time, cost) the lane remembers, and saves. */
export const SEND_LOG_ENTRIES = 64

export interface RestoredAtbState {
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
  timeScale: TimeScaleState | undefined
}

/**
 * Validate a saved state. Anything written "in the future" (clock skew, another device)
 * or out of range means the state is not trusted at all: starting fresh costs at most a
 * 429, resuming from nonsense could stall the lane.
 */
export function parseAtbState(state: PacerState, o: ResolvedAtbOptions, now: number): RestoredAtbState | undefined {
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
  // Optional (older states lack it): without it the lane measures its time scale again.
  const timeScale = parseTimeScale(state.timeScale)
  const base = { savedAt, createdAt, guidance, log, sends, timeScale, lastCongestionAt: 0, congestedSince: 0 }
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
