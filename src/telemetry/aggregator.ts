// The fleet aggregator: pure (takes `now`), in memory, allocation-light. The server's
// memory store IS this code, and the simulator runs it in process, so a simulated
// AATB fleet sees exactly what a deployed one would.
//
// Windows follow the paper's aggregator (algorithms.md §4.2): attempts and 429 reports
// over 30 s in 2 s ring buckets, active clients over 60 s in 10 s buckets. Unlike the
// paper we (by default) include the current, still-filling report bucket, so a fresh
// 429 is visible to the very next reader; `PAPER_AGGREGATOR_OPTIONS` restores the quirk.
//
// Hostile reporters are bounded: a client's attempts count at most
// `maxAttemptsPerClientPerBucket` per report bucket, its 429s once per report bucket,
// its presence once per active bucket, its backlog weight at most `maxBacklogWeight`,
// and a scope tracks at most `maxClientsPerScope` distinct ids (more ids share one
// overflow entry), so spoofed ids cannot inflate the active count without bound.
import { learnableQuotaPerSecond } from './protocol.js'
import type { TelemetryReply, TelemetryReport } from './protocol.js'
import { PROTOCOL_VERSION } from './protocol.js'

export interface AggregatorOptions {
  /** Window over which attempts and 429 reports are summed. Default 30 000. */
  reportWindowMs?: number
  /** Ring bucket of the report window. Default 2 000. */
  reportBucketMs?: number
  /** Window in which a client counts as active. Default 60 000. */
  activeWindowMs?: number
  /** Ring bucket of the active window. Default 10 000. */
  activeBucketMs?: number
  /** Count the current, still-filling report bucket (ours: true; the paper's: false). */
  includeCurrentBucket?: boolean
  /** Attempts one client can add to one report bucket. Default 10 000. */
  maxAttemptsPerClientPerBucket?: number
  /** Largest fair-share weight a backlog earns (an idle client weighs 1). Default 16. */
  maxBacklogWeight?: number
  /** Distinct client ids tracked per scope; further ids share one overflow entry. Default 10 000. */
  maxClientsPerScope?: number
  /** Scopes tracked; the least recently reported is dropped beyond this. Default 10 000. */
  maxScopes?: number
}

export type ResolvedAggregatorOptions = Required<AggregatorOptions>

export const DEFAULT_AGGREGATOR_OPTIONS: ResolvedAggregatorOptions = {
  reportWindowMs: 30_000,
  reportBucketMs: 2_000,
  activeWindowMs: 60_000,
  activeBucketMs: 10_000,
  includeCurrentBucket: true,
  maxAttemptsPerClientPerBucket: 10_000,
  maxBacklogWeight: 16,
  maxClientsPerScope: 10_000,
  maxScopes: 10_000,
}

/** The paper's aggregator exactly: the current 2 s bucket is excluded from the sums. */
export const PAPER_AGGREGATOR_OPTIONS: AggregatorOptions = { includeCurrentBucket: false }

/** Id under which clients beyond `maxClientsPerScope` are counted together. */
export const OVERFLOW_CLIENT_ID = '\u0000overflow'

export interface Aggregator {
  /** Record a (validated) report at `now` and return the aggregate as the reporter sees it. */
  report(report: TelemetryReport, now: number, configuredQuotaPerSecond?: number): TelemetryReply
  /** The aggregate of `scope` at `now`; the fair share is that of a client of weight 1. */
  read(scope: string, now: number, configuredQuotaPerSecond?: number): TelemetryReply
  /** Number of scopes currently tracked. */
  scopeCount(): number
  /** Drop scopes idle for longer than the active window. Called by `report` too. */
  prune(now: number): void
  readonly options: ResolvedAggregatorOptions
}

interface ClientEntry {
  /** Absolute active-bucket index of the client's last report. */
  activeIndex: number
  weight: number
  /** Absolute report-bucket index `bucketAttempts` belongs to. */
  reportIndex: number
  bucketAttempts: number
  /** Absolute report-bucket index of the client's last counted 429 report. */
  throttledIndex: number
}

interface ScopeState {
  clients: Map<string, ClientEntry>
  weightSum: number
  /** Active-bucket index up to which expired clients have been swept. */
  sweptIndex: number
  /** Ring of report buckets: absolute index, attempts, 429 reports per slot. */
  slotIndex: Float64Array
  slotAttempts: Float64Array
  slotThrottled: Float64Array
  learnedQuotaPerSecond: number | undefined
  lastReportAt: number
}

export function resolveAggregatorOptions(options: AggregatorOptions = {}): ResolvedAggregatorOptions {
  const resolved = { ...DEFAULT_AGGREGATOR_OPTIONS }
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (resolved as Record<string, unknown>)[key] = value
  }
  for (const key of ['reportWindowMs', 'reportBucketMs', 'activeWindowMs', 'activeBucketMs'] as const) {
    if (!(resolved[key] > 0)) throw new RangeError(`${key} must be positive`)
  }
  if (resolved.reportWindowMs % resolved.reportBucketMs !== 0) throw new RangeError('reportWindowMs must be a multiple of reportBucketMs')
  if (resolved.activeWindowMs % resolved.activeBucketMs !== 0) throw new RangeError('activeWindowMs must be a multiple of activeBucketMs')
  return resolved
}

export function createAggregator(options: AggregatorOptions = {}): Aggregator {
  const o = resolveAggregatorOptions(options)
  const reportBuckets = o.reportWindowMs / o.reportBucketMs
  const activeBuckets = o.activeWindowMs / o.activeBucketMs
  // One slot more than the window so the excluded current bucket never overwrites the oldest counted one.
  const slots = reportBuckets + 1
  const scopes = new Map<string, ScopeState>()
  // A scope with no report for this long has no active client left and no counted attempt.
  const idleMs = Math.max(o.activeWindowMs + o.activeBucketMs, o.reportWindowMs + 2 * o.reportBucketMs)

  function newScope(now: number): ScopeState {
    return {
      clients: new Map(),
      weightSum: 0,
      sweptIndex: Math.floor(now / o.activeBucketMs),
      slotIndex: new Float64Array(slots).fill(-Infinity),
      slotAttempts: new Float64Array(slots),
      slotThrottled: new Float64Array(slots),
      learnedQuotaPerSecond: undefined,
      lastReportAt: now,
    }
  }

  function sweep(state: ScopeState, activeIndex: number): void {
    if (activeIndex <= state.sweptIndex) return
    state.sweptIndex = activeIndex
    const oldest = activeIndex - activeBuckets + 1
    for (const [id, entry] of state.clients) {
      if (entry.activeIndex < oldest) {
        state.weightSum -= entry.weight
        state.clients.delete(id)
      }
    }
  }

  function slotFor(state: ScopeState, reportIndex: number): number {
    const slot = ((reportIndex % slots) + slots) % slots
    if (state.slotIndex[slot] !== reportIndex) {
      state.slotIndex[slot] = reportIndex
      state.slotAttempts[slot] = 0
      state.slotThrottled[slot] = 0
    }
    return slot
  }

  function weightOf(backlog: number | undefined): number {
    return Math.min(o.maxBacklogWeight, Math.max(1, backlog ?? 0))
  }

  function reply(state: ScopeState | undefined, scope: string, now: number, quota: number | undefined, weight: number): TelemetryReply {
    const reportIndex = Math.floor(now / o.reportBucketMs)
    const newest = o.includeCurrentBucket ? reportIndex : reportIndex - 1
    const oldest = newest - reportBuckets + 1
    let attempts = 0
    let throttled = 0
    let active = 0
    let weightSum = 0
    if (state) {
      for (let slot = 0; slot < slots; slot++) {
        const index = state.slotIndex[slot]!
        if (index >= oldest && index <= newest) {
          attempts += state.slotAttempts[slot]!
          throttled += state.slotThrottled[slot]!
        }
      }
      active = state.clients.size
      weightSum = state.weightSum
    }
    const result: TelemetryReply = {
      v: PROTOCOL_VERSION,
      scope,
      activeClients: Math.max(1, active),
      totalAttempts: attempts,
      throttledReports: throttled,
      windowMs: o.reportWindowMs,
    }
    addFairShare(result, quota ?? state?.learnedQuotaPerSecond, weight, weightSum)
    return result
  }

  function prune(now: number): void {
    // Scopes are kept in least-recently-reported order, so only the head can be stale.
    for (const [scope, state] of scopes) {
      if (now - state.lastReportAt < idleMs) break
      scopes.delete(scope)
    }
  }

  function report(input: TelemetryReport, now: number, configuredQuotaPerSecond?: number): TelemetryReply {
    prune(now)
    let state = scopes.get(input.scope)
    if (state) {
      scopes.delete(input.scope) // re-inserted below: keeps LRU order for prune/eviction
    } else {
      state = newScope(now)
      if (scopes.size >= o.maxScopes) {
        const oldestScope = scopes.keys().next().value
        if (oldestScope !== undefined) scopes.delete(oldestScope)
      }
    }
    scopes.set(input.scope, state)
    state.lastReportAt = now

    const activeIndex = Math.floor(now / o.activeBucketMs)
    sweep(state, activeIndex)
    let id = input.clientId
    let entry = state.clients.get(id)
    if (!entry && state.clients.size >= o.maxClientsPerScope) {
      id = OVERFLOW_CLIENT_ID
      entry = state.clients.get(id)
    }
    const weight = id === OVERFLOW_CLIENT_ID ? 1 : weightOf(input.backlog)
    if (!entry) {
      entry = { activeIndex, weight, reportIndex: -Infinity, bucketAttempts: 0, throttledIndex: -Infinity }
      state.clients.set(id, entry)
      state.weightSum += weight
    } else {
      entry.activeIndex = activeIndex
      state.weightSum += weight - entry.weight
      entry.weight = weight
    }

    const reportIndex = Math.floor(now / o.reportBucketMs)
    const slot = slotFor(state, reportIndex)
    if (entry.reportIndex !== reportIndex) {
      entry.reportIndex = reportIndex
      entry.bucketAttempts = 0
    }
    const room = o.maxAttemptsPerClientPerBucket - entry.bucketAttempts
    const counted = Math.max(0, Math.min(input.attempts, room))
    entry.bucketAttempts += counted
    state.slotAttempts[slot]! += counted
    if (input.throttled > 0 && entry.throttledIndex !== reportIndex) {
      entry.throttledIndex = reportIndex
      state.slotThrottled[slot]! += 1
    }
    // A hint no reply could carry is ignored; the scope keeps the rate it had.
    const learned = input.quota && learnableQuotaPerSecond(input.quota)
    if (learned !== undefined) state.learnedQuotaPerSecond = learned
    return reply(state, input.scope, now, configuredQuotaPerSecond, weight)
  }

  function read(scope: string, now: number, configuredQuotaPerSecond?: number): TelemetryReply {
    const state = scopes.get(scope)
    if (state && now - state.lastReportAt >= idleMs) {
      return reply(undefined, scope, now, configuredQuotaPerSecond, 1)
    }
    if (state) sweep(state, Math.floor(now / o.activeBucketMs))
    return reply(state, scope, now, configuredQuotaPerSecond, 1)
  }

  return { report, read, prune, scopeCount: () => scopes.size, options: o }
}

/**
 * Put the scope's rate and this client's share of it (its weight among all weights) on a
 * reply; both stores answer with this. Nothing is added without a usable rate, or when a tiny
 * rate split many ways underflows to 0, which no valid reply carries.
 */
export function addFairShare(reply: TelemetryReply, quotaPerSecond: number | undefined, weight: number, weightSum: number): void {
  if (quotaPerSecond === undefined || !(quotaPerSecond > 0) || !Number.isFinite(quotaPerSecond)) return
  const fairSharePerSecond = (quotaPerSecond * weight) / Math.max(weightSum, weight)
  if (!(fairSharePerSecond > 0)) return
  reply.quotaPerSecond = quotaPerSecond
  reply.fairSharePerSecond = fairSharePerSecond
}
