// The seams every part of polite-fetch shares. Everything here is plain data or a
// small interface: the pure core (pacers, signals, retry policy) and the simulator
// depend on nothing else, so one pacer implementation runs in page, worker, Node
// and the virtual-time simulator alike.

/** A source of uniform random numbers in [0, 1). Injected so runs are reproducible. */
export type Random = () => number

/**
 * What one attempt's response said, as far as pacing is concerned.
 *
 * - `ok`: the server processed the request (any status that is not congestion or a
 *   transport failure, 4xx included: a 404 says nothing about the quota).
 * - `throttled`: 429 (or 403 carrying rate-limit exhaustion headers).
 * - `overloaded`: 503 or 529 (the server did not process it; retryable for any method).
 * - `error`: the attempt failed without a response (network error, timeout).
 */
export type SignalKind = 'ok' | 'throttled' | 'overloaded' | 'error'

/** One named quota the server announced (IETF `RateLimit-Policy`, or a dialect's limit header). */
export interface QuotaPolicy {
  /** Policy name (IETF item name, Discord bucket, …); `default` when the server gave none. */
  name: string
  /** Quota units per window. */
  quota: number
  /** Window length in ms, when known. */
  windowMs?: number
  /** `requests` (default), `content-bytes`, `concurrent-requests`, or a vendor unit such as `tokens`. */
  unit?: string
}

export interface Signal {
  kind: SignalKind
  /** HTTP status; 0 when there was no response. */
  status: number
  /** Epoch ms before which the server asked us not to send again (Retry-After, retry-after-ms). */
  retryAt?: number
  /**
   * The resolution (ms) `retryAt` was given in, when finer than Retry-After's whole seconds: 1 for
   * `retry-after-ms` (OpenAI, Anthropic) and `x-amz-retry-after`. Absent: whole seconds.
   */
  retryResolutionMs?: number
  /** Requests (quota units) left in the current window, from RateLimit / X-RateLimit-Remaining. */
  remaining?: number
  /** Epoch ms when the quota that `remaining` counts is replenished. */
  resetAt?: number
  /** The quota limit for the window `remaining` belongs to, when announced. */
  limit?: number
  /** Name of the policy / bucket the remaining/reset values belong to (refines the scope). */
  policy?: string
  /** Every policy the response announced. */
  policies?: QuotaPolicy[]
  /**
   * The server's `x-should-retry` on a response with status >= 400 (OpenAI, Anthropic):
   * `false` ends the call with this response; `true` makes it retryable even when it is not
   * congestion (a 500, a 409). Absent when the server did not say.
   */
  shouldRetry?: boolean
}

/** Plain JSON state of a pacer: enough to resume after a worker restart or a reload. */
export interface PacerState {
  /** Strategy name that wrote it (`atb`, `aatb`, `exponential`, `window`, `none`, …). */
  kind: string
  /** Schema version of the state, so a newer SDK can refuse or migrate older state. */
  version: number
  /** Epoch ms at which the state was written. */
  savedAt: number
  [key: string]: unknown
}

/** What the telemetry endpoint says about the fleet sharing one scope (AATB). */
export interface Aggregate {
  /** Distinct clients seen in the active window. At least 1. */
  activeClients: number
  /** Attempts reported by all clients over the report window. */
  totalAttempts: number
  /** Congestion (429) reports over the report window. */
  throttledReports: number
  /** The scope's quota refill rate, when configured or learned (units per second). */
  quotaPerSecond?: number
  /** Suggested fair-share rate for this client (units per second), when the server can compute one. */
  fairSharePerSecond?: number
  /** Window the totals cover, in ms. */
  windowMs: number
}

/** What an AATB pacer tells the telemetry endpoint about one lane (counts since its previous report). */
export interface PacerReport {
  /** Attempts sent (successes and failures). */
  attempts: number
  /** Attempts answered 429 (congestion). */
  throttled: number
  /** The quota the server announced (RateLimit-Policy), when seen: `quota` units per `windowMs`. */
  quota?: { quota: number; windowMs: number }
}

/**
 * The contract every strategy implements (ATB, AATB, exponential, window, none, and
 * the simulator's peers). Pure: no timers, no Date.now, no Math.random, no I/O.
 *
 * The lane calls `delayMs` before every attempt (first tries included); when it
 * returns 0 the lane sends and calls `onSend`; when the response arrives it calls
 * `onResult`. If the last attempt of a request failed, `retryDelayMs` adds the
 * request's own wait (per-request backoff) on top of the lane gate.
 */
export interface Pacer {
  /** Milliseconds until an attempt costing `cost` units may be sent; 0 = now. Never negative. Does not change state. */
  delayMs(now: number, cost: number): number
  /** An attempt costing `cost` units was sent at `now`. */
  onSend(now: number, cost: number): void
  /** Feed back what the attempt's response said. */
  onResult(now: number, signal: Signal): void
  /**
   * Extra wait (ms) before retrying one request whose `failures`-th attempt just failed
   * with `signal`. Lane-wide pacing lives in `delayMs`; this is per-request backoff
   * (exponential strategies). Omitted = 0.
   */
  retryDelayMs?(now: number, failures: number, signal: Signal): number
  /** Plain JSON state; `Strategy.create({ state })` resumes from it. */
  toJSON(now: number): PacerState
  /** AATB only: take in the fleet's aggregate from the telemetry endpoint. */
  onAggregate?(now: number, aggregate: Aggregate): void
  /**
   * AATB only (optional): epoch ms at which this pacer next wants to report to the
   * telemetry endpoint; <= now means due now (e.g. right after a 429), Infinity means
   * nothing to report. `backlog` (requests queued in the lane) keeps a waiting lane
   * reporting. Whoever drives reporting (the telemetry driver in the shells, the
   * simulator in virtual time) calls `takeReport` once this time is reached, sends the
   * counts with the lane's scope, client id and backlog, and passes the reply to
   * `onAggregate`. A lost or late reply is fine: the pacer falls back to local pacing.
   */
  reportDueAt?(now: number, backlog?: number): number
  /**
   * AATB only (optional): the counts since the previous report, resetting them, or
   * undefined when nothing should be sent now (the pacer then moves its schedule on).
   */
  takeReport?(now: number): PacerReport | undefined
  /** Rate currently allowed (units per second); Infinity when not pacing. For stats and events. */
  readonly ratePerSecond: number
  /** Tokens available now (Infinity when not pacing). For stats. */
  tokens(now: number): number
}

export interface PacerInit {
  /** Epoch ms at creation. */
  now: number
  random: Random
  /** State from a previous `toJSON`, when resuming. Ignored if its kind or version does not match. */
  state?: PacerState
}

/** A strategy makes one pacer per lane (scope). */
export interface Strategy {
  readonly name: string
  create(init: PacerInit): Pacer
}

/**
 * The longest delay setTimeout honours: beyond it (about 24.8 days; Infinity included) Node and
 * browsers fire after 1 ms instead. The system clock chains longer timers in steps of this size;
 * the telemetry link and driver hold their timer options to it.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1

/** Time, injected. Epoch milliseconds (not a monotonic origin): state is persisted and shared. */
export interface Clock {
  now(): number
  /** Resolves after `ms`; rejects with the signal's reason when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

/** Async key/value persistence (memory, IndexedDB, file). */
export interface Store {
  get(key: string): Promise<unknown>
  set(key: string, value: unknown): Promise<void>
}
