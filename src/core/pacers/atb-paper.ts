// The paper's ATB exactly as the authors' ATB.py behaves with the evaluation config
// (configs/ATB/config_1.json): a client-side token bucket (B = 40, b0 = 1) whose rate
// starts at 40/min (0.67/s), grows ×1.2 on EVERY success (at least +0.01/s, no upper
// bound), and halves on every 429/503 while the bucket is emptied. Rates are rounded to
// 2 decimals after every update. Retries get no extra sleep: the halved rate and the
// empty bucket space them. The code's `initial_congestion` is compared raw (300) to a
// per-second rate, i.e. "no congestion seen yet": we start r_c at Infinity.
import type { Pacer, PacerInit, PacerState, Signal } from '../types.js'
import { finiteIn, matchingState, pastTime, roundTo } from './pacer-state.js'

export interface PaperAtbOptions {
  /** B: bucket capacity (tokens). Default 40. */
  bucketSize?: number
  /** b0: tokens at start. Default 1. */
  initialTokens?: number
  /** r0: starting rate. Default 0.67/s (40/min rounded to 2 decimals, as the code converts it). */
  initialRatePerSecond?: number
  /** r_c at start. Default Infinity ("no congestion seen yet"). */
  initialCongestionRatePerSecond?: number
  /** α: growth factor per success while r < r_c. Default 1.2. */
  firstStep?: number
  /** β: growth factor per success while r ≥ r_c. Default 1.2. */
  secondStep?: number
  /** δ: minimum additive increase per success. Default 0.01/s. */
  minIncreasePerSecond?: number
  /** σ: rate floor. Default 0.01/s. */
  minRatePerSecond?: number
  /** Decimals rates are rounded to after each update. Default 2; -1 = no rounding. */
  rateDecimals?: number
  /** Retry wait after a transport failure (the code sleeps 1 s, no rate change). Default 1000 ms. */
  networkErrorDelayMs?: number
}

export const PAPER_ATB_DEFAULTS: Required<PaperAtbOptions> = {
  bucketSize: 40,
  initialTokens: 1,
  initialRatePerSecond: 0.67,
  initialCongestionRatePerSecond: Infinity,
  firstStep: 1.2,
  secondStep: 1.2,
  minIncreasePerSecond: 0.01,
  minRatePerSecond: 0.01,
  rateDecimals: 2,
  networkErrorDelayMs: 1000,
}

export const PAPER_ATB_KIND = 'atb-paper'
const STATE_VERSION = 1
/** Tolerance for float error when the lane comes back exactly when a token is due. */
const EPSILON = 1e-9

export function createPaperAtbPacer(options: Required<PaperAtbOptions>, init: PacerInit): Pacer {
  const o = options
  const round = (rate: number): number => (o.rateDecimals >= 0 ? roundTo(rate, o.rateDecimals) : rate)
  const saved = matchingState(init.state, PAPER_ATB_KIND, STATE_VERSION)
  const savedRate = finiteIn(saved?.rate, o.minRatePerSecond, 1e9)
  const savedTokens = finiteIn(saved?.tokens, 0, o.bucketSize)
  const savedLastUsed = pastTime(saved?.lastUsedAt, init.now)
  const fresh = savedRate === undefined || savedTokens === undefined || savedLastUsed === undefined

  let rate = fresh ? Math.max(o.minRatePerSecond, round(o.initialRatePerSecond)) : savedRate
  let tokens = fresh ? Math.min(o.bucketSize, o.initialTokens) : savedTokens
  // The code refills from `last_used`, the time of the previous acquire (not of the last refill).
  let lastUsedAt = fresh ? init.now : savedLastUsed
  let congestionRate = fresh
    ? o.initialCongestionRatePerSecond
    : (finiteIn(saved?.congestionRate, 0, 1e9) ?? o.initialCongestionRatePerSecond)

  const available = (now: number): number =>
    Math.min(o.bucketSize, tokens + (Math.max(0, now - lastUsedAt) / 1000) * rate)

  return {
    delayMs(now, cost) {
      const need = Math.min(Math.max(cost, 0), o.bucketSize)
      const have = available(now)
      if (have >= need - EPSILON) return 0
      // sleep((1 − tokens)/r): rounded up to whole ms so that coming back in time finds the token.
      return Math.ceil(((need - have) / rate) * 1000)
    },
    onSend(now, cost) {
      // After a sleep the code sets tokens = max(tokens − 1, 0): what accrued beyond the
      // token it waited for is dropped. Clamping at 0 reproduces both branches.
      tokens = Math.max(0, available(now) - cost)
      lastUsedAt = Math.max(lastUsedAt, now)
    },
    onResult(_now, signal: Signal) {
      if (signal.kind === 'ok') {
        const step = rate < congestionRate ? o.firstStep : o.secondStep
        rate = round(Math.max(rate + o.minIncreasePerSecond, rate * step))
      } else if (signal.kind === 'throttled' || signal.kind === 'overloaded') {
        congestionRate = rate
        rate = Math.max(o.minRatePerSecond, round(rate / 2))
        tokens = 0 // last_used is deliberately not reset, as in the code
      }
      // 'error' (no response): the code neither grows nor cuts; it sleeps 1 s (retryDelayMs).
    },
    retryDelayMs(_now, _failures, signal) {
      return signal.kind === 'error' ? o.networkErrorDelayMs : 0
    },
    toJSON(now): PacerState {
      return {
        kind: PAPER_ATB_KIND,
        version: STATE_VERSION,
        savedAt: now,
        rate,
        tokens,
        lastUsedAt: Math.min(lastUsedAt, now),
        // JSON has no Infinity: null means "no congestion seen yet".
        congestionRate: Number.isFinite(congestionRate) ? congestionRate : null,
      }
    },
    get ratePerSecond() {
      return rate
    },
    tokens(now) {
      return available(now)
    },
  }
}
