// The default ATB's internal constants: values no measurement of their own explains (fitted
// with the rest at the paper scale, k = 1), or rules whose switch only a test needs. They are not
// options: a knob a user cannot reason about is one more way to mistune the pacer. Each carries
// its one-line rationale; durations run on the announced window like the options' (atb-adaptive.ts
// `scaled`). A test may replace them through `createAtbPacer`'s resolved options, nothing else.

export const ATB_CONSTANTS = {
  /** Window the admitted rate is measured over: fitted at k = 1, no measurement of its own. */
  windowMs: 60_000,
  /** The admitted rate spans at least this many admissions: a slow lane (one success a minute) read 0 or 1 in a fixed window. */
  minSamples: 6,
  /** On a 429 the rate falls to this multiple of the admitted rate: 1 = what got through (fitted). */
  fallbackFactor: 1,
  /** On a 429 the rate falls at least to this multiple of the current rate (fitted). */
  maxCutFactor: 0.8,
  /** Per-request backoff after repeated 429s, in spacings: (2^(n−1) − 1) × this (fitted). */
  retryBackoffFactor: 4,
  /** The 429s within dryLaneWindowMs, divided by this, multiply that backoff: a stepped quota stays dry until its next step. */
  dryLaneThrottles: 2,
  /** Window those 429s are counted over (fitted). */
  dryLaneWindowMs: 300_000,
  /** Largest multiplier of a dry lane's backoff (fitted). */
  dryLaneMaxBackoffFactor: 2,
  /** On a lane's first measured 429 the rate is at most this multiple of its attempt rate (fitted). */
  firstCutFactor: 0.35,
  /** The first paced send after the first cut waits a uniform share of one spacing: the fleet's first cuts come together. */
  jitterFirstCut: true,
  /**
   * After a 429 with a long Retry-After (a quota refilled in lumps, such as a bucket refilled every
   * minute), the plateau lasts this long instead of plateauMs: with the plain plateau every busy lane
   * of a stepped bucket met one 429 per step. No longer than plateauMs = off.
   */
  lumpPlateauMs: 60_000,
  /** Growth slows within this fraction of the rate of the last cut (a plateau; fitted). */
  plateauBand: 0.3,
  /** Growth multiplier on the plateau (fitted). */
  plateauGrowthFactor: 0.1,
  /** The plateau band of a steady lane (fitted). */
  steadyPlateauBand: 0.5,
  /** Longest Retry-After that marks a continuously refilled quota: a continuous bucket answers 1 s (whole seconds). */
  steadyRetryAfterMs: 2_000,
  /** Admissions within steadyWindowMs that make a lane steady: a long plateau for light lanes took 100 of them to 1.27 × UB. */
  steadySuccesses: 3,
  /** Window those admissions are counted over (fitted). */
  steadyWindowMs: 120_000,
  /** A steady lane's failed probe cuts to this multiple of the usual cut: what it regained was someone else's (fitted). */
  steadyProbeCutFactor: 0.3,
  /** Past a steady lane's long plateau its growth doubles this often: at a constant 2 %/s the last of 5 clients took 1.16 × UB. */
  steadyGrowthDoublingMs: 45_000,
  /** Largest multiple of growthPerSecond that doubling reaches (fitted). */
  steadyMaxGrowthFactor: 8,
  /** Admissions within steadyWindowMs for that faster growth: 20 light clients' faster probes cost 429s with 3. */
  steadyGrowthSuccesses: 10,
  /** Successes a lane needs before a rate is read from them: one over the minimum span read as 0.1/s and held a retry for tens of seconds. */
  minEvidence: 2,
  /** Each further 429 of a lane admitted before but still without evidence multiplies its rate by this: ×1/2 cost a 100-client fleet twice the extra 429s. */
  coldBackoffFactor: 0.125,
  /** Slow start's growth per success after a burst's first 429 (TCP's slow start: a burst measures capacity, not rate). */
  burstStartGrowth: 1.5,
  /** Bucket capacity while pacing: one unit, no burst (fitted). */
  burstUnits: 1,
  /** A send within this many spacings of the previous one counts as using the rate (fitted). */
  usingRateSlack: 2,
  /**
   * How long the quota lasted (first admission to first 429) is at most this across the paper's
   * scenarios at k = 1 (95th percentile 250 s): up to it a lane without an announced window keeps
   * its durations as measured (atb-time-scale.ts).
   */
  drainBandHighMs: 300_000,
  /**
   * ...and at least this (5th percentile 38 s on the continuous bucket; the band is a decade wide):
   * a lane alone on the quota that drained it sooner runs on a faster scale. 40 s cost 3 stepped
   * status-only cells at k = 1 (that bucket drains from 17 s), 20 s half the gain at k = 0.1.
   */
  drainBandLowMs: 30_000,
  /** Outside the band the lane's time scale is its drain over the k = 1 median (continuous bucket, 124 s). */
  drainReferenceMs: 120_000,
  /**
   * Admissions before the first 429 for a drain below the band (a faster quota) to count: coming
   * late only shortens a drain, and with 1 the 100-client runs of the k = 1 headline met 5–27 %
   * more 429s (15 rows beyond their 95 % intervals; 2 or 3: 3 % more, stepped and sliding window);
   * 8 gave back a status-only cell at k = 0.1. A long drain counts from one admission.
   */
  drainShortMinAdmissions: 4,
  /** Without a policy (X-RateLimit-*), the pace set against remaining/reset is measured over this (fitted; absolute). */
  paceWindowMs: 10_000,
}

export type AtbConstants = typeof ATB_CONSTANTS
