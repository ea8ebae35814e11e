// The fleet aggregator: pure (takes `now`), in memory, allocation-light. The server's
// memory store IS this code (one aggregator per tenant), and the simulator runs it in
// process, so a simulated AATB fleet sees exactly what a deployed one would.
//
// Windows follow the paper's aggregator (algorithms.md §4.2): attempts and 429 reports
// over 30 s in 2 s ring buckets, active clients over 60 s in 10 s buckets. Unlike the
// paper we (by default) include the current, still-filling report bucket, so a fresh
// 429 is visible to the very next reader; `PAPER_AGGREGATOR_OPTIONS` restores the quirk.
//
// Influence is bounded by WHO reports, not only by what is reported: client ids are free
// to invent, source addresses are not. Every report comes from a source (the server passes
// the caller's address); per scope, an untrusted source counts for at most
// `sourceMedianMultiple` × the median source, in clients and in backlog weight, and its
// attempts and 429 reports per bucket are bounded by the clients it is counted for. A
// learned quota is the median of the hints of at least `minQuotaSources` distinct
// sources, or a trusted reporter's hint. Memory is bounded per source and per aggregator:
// scopes a source may touch, client ids tracked per source and scope, per scope and in
// total; ids beyond those share one overflow entry, and a new scope beyond them is refused
// (never evicting a live one). The records of which scopes each source touched are bounded in
// total too; beyond that the least recently reporting sources' are forgotten. Callers that
// pass no source (the simulator) are trusted, and each of their clients is its own source.
import { learnableQuotaPerSecond, PROTOCOL_VERSION } from './protocol.js'
import { RankedMultiset } from './ranked-multiset.js'
import { RecencyMap } from './recency-map.js'
import type { TelemetryReply, TelemetryReport } from './protocol.js'

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
  /** Live scopes tracked (per tenant on the server); a new scope beyond this is refused. Default 10 000. */
  maxScopes?: number
  /** Client ids tracked over all scopes; further ids share their scope's overflow entry. Default 100 000. */
  maxClients?: number
  /** Scopes one untrusted source may report on within the idle window. Default 256. */
  maxScopesPerSource?: number
  /** Client ids tracked per untrusted source and scope. Default 64. */
  maxClientsPerSource?: number
  /**
   * Records of which scopes each untrusted source reported on (what `maxScopesPerSource`
   * counts), over all sources; beyond this the sources that reported least recently are
   * forgotten. Default 100 000.
   */
  maxScopeClaims?: number
  /** An untrusted source counts for at most this multiple of the scope's median source. Default 2. */
  sourceMedianMultiple?: number
  /** Distinct sources whose hints must agree (their median) before a quota is learned. Default 3. */
  minQuotaSources?: number
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
  maxClients: 100_000,
  maxScopesPerSource: 256,
  maxClientsPerSource: 64,
  // As many as the ids the aggregator tracks (`maxClients`): each tracked id is one source's on
  // one scope, so a fleet the id cap holds fits. A record costs about 150 B of heap; unbounded,
  // 8,000 addresses × 250 scopes (well within one 70 s window at the endpoint's rate) held
  // 2,000,000 of them: 348 MiB of heap for the tenant, against 76 MiB with this cap.
  maxScopeClaims: 100_000,
  sourceMedianMultiple: 2,
  minQuotaSources: 3,
}

/** The paper's aggregator exactly: the current 2 s bucket is excluded from the sums. */
export const PAPER_AGGREGATOR_OPTIONS: AggregatorOptions = { includeCurrentBucket: false }

/** Id under which clients the aggregator does not track are counted together (one per scope). */
export const OVERFLOW_CLIENT_ID = '\u0000overflow'

/** Who sent a report: the source (the caller's address) and whether its reporter is trusted. */
export interface Reporter {
  source: string
  /** Trusted reporters (a trusted token) are not bounded per source, and their quota hints are taken as given. */
  trusted?: boolean
}

/**
 * The key of a reporter's source. A trusted and an untrusted reporter behind one address (a
 * backend's NAT shared with an office that runs the page token; every caller of a web handler
 * given no address) are two sources: as one, whichever came first set it trusted or not, so
 * an untrusted address's ids counted unbounded in a trusted source (64 ids: 35 clients and 35
 * 429 reports where the bound is 2), or a trusted fleet was capped as an untrusted address.
 * Both stores key by this. No address contains NUL, so it cannot be forged.
 */
export function sourceKeyOf(from: Reporter): string {
  return from.trusted === true ? `\u0000trusted:${from.source}` : from.source
}

/**
 * The key of a client's entry: its id within its source, never the id alone. Client ids are
 * free to invent and to copy: keyed by id, a report from any address that named another
 * address's client landed on that client's entry, so it counted in that address's bounds (each
 * copied id added 10,000 attempts and a 429 report beyond the copier's own bound), set that
 * client's weight and quota hint, and with `seq` 2^53 - 1 muted that client's own reports.
 * Both stores key by this.
 */
export function clientKeyOf(sourceKey: string, clientId: string): string {
  return `${sourceKey}\u0000${clientId}`
}

export type RecordResult =
  | { ok: true; reply: TelemetryReply; duplicate: boolean }
  /** A new scope beyond `maxScopes` or `maxScopesPerSource`; one frees after `retryAfterMs`. */
  | { ok: false; reason: 'scope-limit'; retryAfterMs: number }

/** One scope as the operator's dashboard shows it. */
export interface ScopeSnapshot {
  scope: string
  activeClients: number
  sources: number
  /** Per report bucket, oldest first (the window's buckets, the current one last). */
  attempts: number[]
  throttledAttempts: number[]
  bucketMs: number
  quotaPerSecond?: number
  fairSharePerSecond?: number
  lastReportAt: number
}

export interface Aggregator {
  /** Record a (validated) report at `now`; a refused new scope is answered with its read-only aggregate. */
  report(report: TelemetryReport, now: number, configuredQuotaPerSecond?: number, from?: Reporter): TelemetryReply
  /** Record a report and say whether it was counted, a duplicate, or refused. */
  record(report: TelemetryReport, now: number, configuredQuotaPerSecond?: number, from?: Reporter): RecordResult
  /** The aggregate of `scope` at `now`; the fair share is that of an untracked client of weight 1. */
  read(scope: string, now: number, configuredQuotaPerSecond?: number): TelemetryReply
  /** The most recently reported scopes (at most `limit`), newest first. */
  snapshot(now: number, limit: number, quotaOf?: (scope: string) => number | undefined): ScopeSnapshot[]
  /** Number of scopes currently tracked. */
  scopeCount(): number
  /** Number of client ids currently tracked (overflow entries excluded). */
  clientCount(): number
  /** Number of (untrusted source, scope) records held for `maxScopesPerSource`. */
  scopeClaimCount(): number
  /** Drop scopes (and sources' scope lists) idle for longer than the active window. Called by `report` too. */
  prune(now: number): void
  readonly options: ResolvedAggregatorOptions
}

/** A scope's per-source bounds, the sums of what its sources count for under them, and its learned quota. */
export interface ScopeBounds {
  capClients: number
  capWeight: number
  countedClients: number
  countedWeight: number
  medianQuotaPerSecond: number | undefined
}

/** A scope's bounds as kept, as its ordered sets give them now, and its sources: see `inspectScope`. */
export interface ScopeInspection {
  kept: ScopeBounds
  fromSets: ScopeBounds
  sources: { trusted: boolean; clients: number; weight: number; quota: number | undefined }[]
}

const inspectors = new WeakMap<Aggregator, (scope: string) => ScopeInspection | undefined>()

/**
 * For tests, not the package's API: what `aggregator` holds for `scope`, so a test can recount
 * its sources from scratch and hold the incremental state to that recount after every step.
 */
export function inspectScope(aggregator: Aggregator, scope: string): ScopeInspection | undefined {
  return inspectors.get(aggregator)?.(scope)
}

/** The scopes an untrusted source reported on (each at its latest report), least recent first. */
interface SourceClaims {
  lastAt: number
  scopes: RecencyMap<string, number>
}

interface SourceEntry {
  trusted: boolean
  /** Active client entries of this source in the scope, and the sum of their weights. */
  clients: number
  weight: number
  /** Report bucket `bucketAttempts`/`bucketThrottled` belong to. */
  reportIndex: number
  bucketAttempts: number
  bucketThrottled: number
  /** The source's latest learnable quota hint, units per second. */
  quota: number | undefined
}

interface ClientEntry {
  source: SourceEntry
  sourceKey: string
  tracked: boolean
  /** Absolute active-bucket index of the client's last report. */
  activeIndex: number
  weight: number
  /** Absolute report-bucket index `bucketAttempts` belongs to. */
  reportIndex: number
  bucketAttempts: number
  /** Absolute report-bucket index of the client's last counted 429 report. */
  throttledIndex: number
  /** Highest sequence number counted, -1 for none. */
  seq: number
}

interface ScopeState {
  clients: Map<string, ClientEntry>
  sources: Map<string, SourceEntry>
  /** Tracked (non-overflow) entries. */
  tracked: number
  /** Bounds from the median source, and the sums of what every source counts for under them. */
  capClients: number
  capWeight: number
  countedClients: number
  countedWeight: number
  /**
   * Every source's clients and weight, and the hints of those with one, kept in order as they
   * change, so the bounds are found again in O(log n) instead of a sort over all sources; and
   * the untrusted sources' apart (what they count for is capped), the trusted ones' as sums.
   */
  sourceClients: RankedMultiset
  sourceWeights: RankedMultiset
  sourceHints: RankedMultiset
  untrustedClients: RankedMultiset
  untrustedWeights: RankedMultiset
  trustedClients: number
  trustedWeight: number
  /** Active-bucket index up to which expired clients have been swept. */
  sweptIndex: number
  /**
   * Ring of report buckets: absolute index, attempts, 429 reports, 429 attempts per slot.
   * Plain arrays of doubles, on the JS heap: a Float64Array this size would put its bytes
   * in a malloc'd buffer outside it, four per scope, and a scope flood churns thousands.
   */
  slotIndex: number[]
  slotAttempts: number[]
  slotThrottled: number[]
  slotThrottledAttempts: number[]
  medianQuotaPerSecond: number | undefined
  trustedQuotaPerSecond: number | undefined
  lastReportAt: number
}

const OVERFLOW_SOURCE = OVERFLOW_CLIENT_ID

export function resolveAggregatorOptions(options: AggregatorOptions = {}): ResolvedAggregatorOptions {
  const resolved = { ...DEFAULT_AGGREGATOR_OPTIONS }
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (resolved as Record<string, unknown>)[key] = value
  }
  for (const key of ['reportWindowMs', 'reportBucketMs', 'activeWindowMs', 'activeBucketMs', 'sourceMedianMultiple'] as const) {
    if (!(resolved[key] > 0)) throw new RangeError(`${key} must be positive`)
  }
  for (const key of ['maxScopes', 'maxClients', 'maxClientsPerScope', 'maxScopesPerSource', 'maxClientsPerSource', 'maxScopeClaims', 'minQuotaSources'] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 1) throw new RangeError(`${key} must be a positive integer`)
  }
  if (resolved.reportWindowMs % resolved.reportBucketMs !== 0) throw new RangeError('reportWindowMs must be a multiple of reportBucketMs')
  if (resolved.activeWindowMs % resolved.activeBucketMs !== 0) throw new RangeError('activeWindowMs must be a multiple of activeBucketMs')
  return resolved
}

/** How long a scope (or a source's claim on one) outlives its last report: no active client and no counted attempt is left. */
export function aggregatorIdleMs(o: ResolvedAggregatorOptions): number {
  return Math.max(o.activeWindowMs + o.activeBucketMs, o.reportWindowMs + 2 * o.reportBucketMs)
}

/** A backlog's fair-share weight: 1 for an idle client, at most `maxBacklogWeight`. */
export function backlogWeight(o: ResolvedAggregatorOptions, backlog: number | undefined): number {
  return Math.min(o.maxBacklogWeight, Math.max(1, backlog ?? 0))
}

export function createAggregator(options: AggregatorOptions = {}): Aggregator {
  const o = resolveAggregatorOptions(options)
  const reportBuckets = o.reportWindowMs / o.reportBucketMs
  const activeBuckets = o.activeWindowMs / o.activeBucketMs
  // One slot more than the window so the excluded current bucket never overwrites the oldest counted one.
  const slots = reportBuckets + 1
  // Kept in least-recently-reported order, so pruning looks at the oldest end only.
  const scopes = new RecencyMap<string, ScopeState>()
  const sourceScopes = new RecencyMap<string, SourceClaims>()
  const idleMs = aggregatorIdleMs(o)
  let trackedTotal = 0
  /** Claims held in `sourceScopes`, over all sources. */
  let claimTotal = 0

  function newScope(now: number): ScopeState {
    return {
      clients: new Map(),
      sources: new Map(),
      tracked: 0,
      capClients: Infinity,
      capWeight: Infinity,
      countedClients: 0,
      countedWeight: 0,
      sourceClients: new RankedMultiset(),
      sourceWeights: new RankedMultiset(),
      sourceHints: new RankedMultiset(),
      untrustedClients: new RankedMultiset(),
      untrustedWeights: new RankedMultiset(),
      trustedClients: 0,
      trustedWeight: 0,
      sweptIndex: Math.floor(now / o.activeBucketMs),
      slotIndex: new Array<number>(slots).fill(-Infinity),
      slotAttempts: new Array<number>(slots).fill(0),
      slotThrottled: new Array<number>(slots).fill(0),
      slotThrottledAttempts: new Array<number>(slots).fill(0),
      medianQuotaPerSecond: undefined,
      trustedQuotaPerSecond: undefined,
      lastReportAt: now,
    }
  }

  const countedClientsOf = (state: ScopeState, source: SourceEntry) => (source.trusted ? source.clients : Math.min(source.clients, state.capClients))
  const countedWeightOf = (state: ScopeState, source: SourceEntry) => (source.trusted ? source.weight : Math.min(source.weight, state.capWeight))

  /**
   * Bounds from the median source, the sums under them, and the median quota hint: what a
   * sort of every source's counts gives, read from the ordered sets in O(log n).
   */
  function recompute(state: ScopeState): void {
    const bounds = boundsOf(state)
    state.capClients = bounds.capClients
    state.capWeight = bounds.capWeight
    state.countedClients = bounds.countedClients
    state.countedWeight = bounds.countedWeight
    state.medianQuotaPerSecond = bounds.medianQuotaPerSecond
  }

  function boundsOf(state: ScopeState): ScopeBounds {
    const capClients = Math.ceil(o.sourceMedianMultiple * (state.sourceClients.median() ?? 1))
    const capWeight = Math.ceil(o.sourceMedianMultiple * (state.sourceWeights.median() ?? 1))
    return {
      capClients,
      capWeight,
      countedClients: state.trustedClients + state.untrustedClients.cappedSum(capClients),
      countedWeight: state.trustedWeight + state.untrustedWeights.cappedSum(capWeight),
      medianQuotaPerSecond: state.sourceHints.size >= o.minQuotaSources ? state.sourceHints.median() : undefined,
    }
  }

  /** Put a source's clients and weight in the scope's ordered sets (it has just joined, or changed). */
  function listSource(state: ScopeState, source: SourceEntry): void {
    state.sourceClients.add(source.clients)
    state.sourceWeights.add(source.weight)
    if (source.trusted) {
      state.trustedClients += source.clients
      state.trustedWeight += source.weight
    } else {
      state.untrustedClients.add(source.clients)
      state.untrustedWeights.add(source.weight)
    }
  }

  /** Take a source's clients and weight out of the ordered sets (it leaves, or is about to change). */
  function unlistSource(state: ScopeState, source: SourceEntry): void {
    state.sourceClients.delete(source.clients)
    state.sourceWeights.delete(source.weight)
    if (source.trusted) {
      state.trustedClients -= source.clients
      state.trustedWeight -= source.weight
    } else {
      state.untrustedClients.delete(source.clients)
      state.untrustedWeights.delete(source.weight)
    }
  }

  function removeClient(state: ScopeState, id: string, entry: ClientEntry): void {
    state.clients.delete(id)
    const source = entry.source
    unlistSource(state, source)
    source.clients -= 1
    source.weight -= entry.weight
    if (entry.tracked) {
      state.tracked--
      trackedTotal--
    }
    if (source.clients === 0) {
      state.sources.delete(entry.sourceKey)
      if (source.quota !== undefined) state.sourceHints.delete(source.quota)
    } else {
      listSource(state, source)
    }
  }

  function sweep(state: ScopeState, activeIndex: number): void {
    if (activeIndex <= state.sweptIndex) return
    state.sweptIndex = activeIndex
    const oldest = activeIndex - activeBuckets + 1
    for (const [id, entry] of state.clients) {
      if (entry.activeIndex < oldest) removeClient(state, id, entry)
    }
    recompute(state)
  }

  function slotFor(state: ScopeState, reportIndex: number): number {
    const slot = ((reportIndex % slots) + slots) % slots
    if (state.slotIndex[slot] !== reportIndex) {
      state.slotIndex[slot] = reportIndex
      state.slotAttempts[slot] = 0
      state.slotThrottled[slot] = 0
      state.slotThrottledAttempts[slot] = 0
    }
    return slot
  }

  function quotaOf(state: ScopeState | undefined, configured: number | undefined): number | undefined {
    return configured ?? state?.trustedQuotaPerSecond ?? state?.medianQuotaPerSecond
  }

  function reply(state: ScopeState | undefined, scope: string, now: number, quota: number | undefined, weight: number): TelemetryReply {
    const reportIndex = Math.floor(now / o.reportBucketMs)
    const newest = o.includeCurrentBucket ? reportIndex : reportIndex - 1
    const oldest = newest - reportBuckets + 1
    let attempts = 0
    let throttled = 0
    if (state) {
      for (let slot = 0; slot < slots; slot++) {
        const index = state.slotIndex[slot]!
        if (index >= oldest && index <= newest) {
          attempts += state.slotAttempts[slot]!
          throttled += state.slotThrottled[slot]!
        }
      }
    }
    const result: TelemetryReply = {
      v: PROTOCOL_VERSION,
      scope,
      activeClients: Math.max(1, state?.countedClients ?? 0),
      totalAttempts: attempts,
      throttledReports: throttled,
      windowMs: o.reportWindowMs,
    }
    addFairShare(result, quotaOf(state, quota), weight, state?.countedWeight ?? 0)
    return result
  }

  function prune(now: number): void {
    for (let state = scopes.oldestValue(); state && now - state.lastReportAt >= idleMs; state = scopes.oldestValue()) {
      for (const entry of state.clients.values()) if (entry.tracked) trackedTotal--
      scopes.delete(scopes.oldestKey()!)
    }
    for (let claims = sourceScopes.oldestValue(); claims && now - claims.lastAt >= idleMs; claims = sourceScopes.oldestValue()) {
      claimTotal -= claims.scopes.size
      sourceScopes.delete(sourceScopes.oldestKey()!)
    }
  }

  /** The source's claims on scopes, its expired ones dropped; undefined when it holds none. */
  function claimsOf(key: string, now: number): SourceClaims | undefined {
    const claims = sourceScopes.get(key)
    if (!claims) return undefined
    for (let at = claims.scopes.oldestValue(); at !== undefined && now - at >= idleMs; at = claims.scopes.oldestValue()) {
      claims.scopes.delete(claims.scopes.oldestKey()!)
      claimTotal--
    }
    return claims
  }

  /**
   * Record the source's claim on `scope` at `now`. Beyond `maxScopeClaims` in all, the sources
   * that reported least recently are forgotten, as the request limiter forgets keys: a claim
   * holds no aggregate, only a source's count towards `maxScopesPerSource`, so forgetting one
   * can only let that source start its count again. Refusing instead would let a few hundred
   * addresses of 256 scopes each shut every new address out of telemetry.
   */
  function claim(key: string, claims: SourceClaims | undefined, scope: string, now: number): void {
    claims ??= { lastAt: now, scopes: new RecencyMap() }
    if (!claims.scopes.has(scope)) claimTotal++
    claims.scopes.set(scope, now) // the most recent: LRU order
    claims.lastAt = now
    sourceScopes.set(key, claims) // the most recent: LRU order, for prune and for forgetting
    for (let oldest = sourceScopes.oldestValue(); claimTotal > o.maxScopeClaims && oldest !== claims; oldest = sourceScopes.oldestValue()) {
      claimTotal -= oldest!.scopes.size
      sourceScopes.delete(sourceScopes.oldestKey()!)
    }
  }

  function refuse(now: number, oldestAt: number): RecordResult {
    return { ok: false, reason: 'scope-limit', retryAfterMs: Math.max(1, idleMs - (now - oldestAt)) }
  }

  function record(input: TelemetryReport, now: number, configuredQuotaPerSecond?: number, from?: Reporter): RecordResult {
    prune(now)
    const trusted = from ? from.trusted === true : true
    // Without a source (in process) each client is its own source.
    const sourceKey = from ? sourceKeyOf(from) : input.clientId
    let state = scopes.get(input.scope)
    // Trusted sources are not bounded per source: they hold no claims.
    const claims = trusted ? undefined : claimsOf(sourceKey, now)
    if (claims && !claims.scopes.has(input.scope) && claims.scopes.size >= o.maxScopesPerSource) return refuse(now, claims.scopes.oldestValue()!)
    if (!state && scopes.size >= o.maxScopes) return refuse(now, scopes.oldestValue()!.lastReportAt)
    if (!trusted) claim(sourceKey, claims, input.scope, now)
    state ??= newScope(now)
    scopes.set(input.scope, state) // the most recent: keeps LRU order for prune
    state.lastReportAt = now

    const activeIndex = Math.floor(now / o.activeBucketMs)
    sweep(state, activeIndex)
    let id = from ? clientKeyOf(sourceKey, input.clientId) : input.clientId
    let entry = state.clients.get(id)
    // A sequence number already counted: a retry of a report that was recorded (e.g. the store
    // answered late and the client saw a 503). Nothing changes; the reply is the aggregate.
    if (entry && input.seq !== undefined && input.seq <= entry.seq) {
      return { ok: true, reply: reply(state, input.scope, now, configuredQuotaPerSecond, effectiveWeight(state, entry)), duplicate: true }
    }
    let source: SourceEntry
    let createdEntry = false
    let createdSource = false
    if (entry) {
      source = entry.source
    } else {
      let sourceKeyOfEntry = sourceKey
      let tracked = true
      const own = state.sources.get(sourceKey)
      if (state.tracked >= o.maxClientsPerScope || trackedTotal >= o.maxClients ||
        (!trusted && (own?.clients ?? 0) >= o.maxClientsPerSource)) {
        id = OVERFLOW_CLIENT_ID
        sourceKeyOfEntry = OVERFLOW_SOURCE
        tracked = false
        entry = state.clients.get(id)
      }
      if (entry) {
        source = entry.source
      } else {
        const existing = state.sources.get(sourceKeyOfEntry)
        createdSource = existing === undefined
        source = existing ?? newSource(tracked && trusted)
        entry = newEntry(source, sourceKeyOfEntry, tracked, activeIndex)
        createdEntry = true
      }
    }
    // A new client in a source at or below the bound may move the median; one above it cannot
    // (a source above twice the median is above the median). Weights alone move the bounds at
    // the next sweep (every active bucket): the Redis script keeps the same moments, and the
    // bounds between them are what both stores answer with.
    const movesMedian = createdSource || (createdEntry && source.clients <= state.capClients)
    const beforeClients = createdSource ? 0 : countedClientsOf(state, source)
    const beforeWeight = createdSource ? 0 : countedWeightOf(state, source)
    if (createdSource) state.sources.set(entry.sourceKey, source)
    const weight = entry.tracked ? backlogWeight(o, input.backlog) : 1
    if (createdEntry || weight !== entry.weight) {
      if (!createdSource) unlistSource(state, source)
      if (createdEntry) {
        state.clients.set(id, entry)
        source.clients += 1
        if (entry.tracked) {
          state.tracked++
          trackedTotal++
        }
      }
      source.weight += weight - entry.weight
      entry.weight = weight
      listSource(state, source)
    }
    entry.activeIndex = activeIndex
    if (input.seq !== undefined && entry.tracked) entry.seq = input.seq
    if (movesMedian) {
      recompute(state)
    } else {
      state.countedClients += countedClientsOf(state, source) - beforeClients
      state.countedWeight += countedWeightOf(state, source) - beforeWeight
    }

    const reportIndex = Math.floor(now / o.reportBucketMs)
    const slot = slotFor(state, reportIndex)
    if (entry.reportIndex !== reportIndex) {
      entry.reportIndex = reportIndex
      entry.bucketAttempts = 0
    }
    if (source.reportIndex !== reportIndex) {
      source.reportIndex = reportIndex
      source.bucketAttempts = 0
      source.bucketThrottled = 0
    }
    const sourceClients = countedClientsOf(state, source)
    const room = Math.min(o.maxAttemptsPerClientPerBucket - entry.bucketAttempts, sourceClients * o.maxAttemptsPerClientPerBucket - source.bucketAttempts)
    const counted = Math.max(0, Math.min(input.attempts, room))
    entry.bucketAttempts += counted
    source.bucketAttempts += counted
    state.slotAttempts[slot]! += counted
    state.slotThrottledAttempts[slot]! += Math.min(input.throttled, counted)
    if (input.throttled > 0 && entry.throttledIndex !== reportIndex && source.bucketThrottled < sourceClients) {
      entry.throttledIndex = reportIndex
      source.bucketThrottled += 1
      state.slotThrottled[slot]! += 1
    }
    // A hint no reply could carry is ignored; the scope keeps the rate it had.
    const learned = input.quota && learnableQuotaPerSecond(input.quota)
    if (learned !== undefined) {
      if (trusted) state.trustedQuotaPerSecond = learned
      if (source.quota !== learned) {
        if (source.quota !== undefined) state.sourceHints.delete(source.quota)
        state.sourceHints.add(learned)
        source.quota = learned
        recompute(state)
      }
    }
    return { ok: true, reply: reply(state, input.scope, now, configuredQuotaPerSecond, effectiveWeight(state, entry)), duplicate: false }
  }

  /** A client's weight in the fair share: its share of its source's counted weight. */
  function effectiveWeight(state: ScopeState, entry: ClientEntry): number {
    const source = entry.source
    if (source.trusted || source.weight <= state.capWeight) return entry.weight
    return (entry.weight * state.capWeight) / source.weight
  }

  function newSource(trusted: boolean): SourceEntry {
    return { trusted, clients: 0, weight: 0, reportIndex: -Infinity, bucketAttempts: 0, bucketThrottled: 0, quota: undefined }
  }

  function newEntry(source: SourceEntry, sourceKey: string, tracked: boolean, activeIndex: number): ClientEntry {
    return { source, sourceKey, tracked, activeIndex, weight: 0, reportIndex: -Infinity, bucketAttempts: 0, throttledIndex: -Infinity, seq: -1 }
  }

  function liveState(scope: string, now: number): ScopeState | undefined {
    const state = scopes.get(scope)
    if (!state || now - state.lastReportAt >= idleMs) return undefined
    sweep(state, Math.floor(now / o.activeBucketMs))
    return state
  }

  function read(scope: string, now: number, configuredQuotaPerSecond?: number): TelemetryReply {
    return reply(liveState(scope, now), scope, now, configuredQuotaPerSecond, 1)
  }

  function snapshot(now: number, limit: number, quotaFor?: (scope: string) => number | undefined): ScopeSnapshot[] {
    prune(now)
    const names = scopes.newestKeys(limit)
    const reportIndex = Math.floor(now / o.reportBucketMs)
    return names.map((scope) => {
      const state = liveState(scope, now)!
      const aggregate = reply(state, scope, now, quotaFor?.(scope), 1)
      const attempts: number[] = []
      const throttledAttempts: number[] = []
      for (let index = reportIndex - reportBuckets + 1; index <= reportIndex; index++) {
        const slot = ((index % slots) + slots) % slots
        const current = state.slotIndex[slot] === index
        attempts.push(current ? state.slotAttempts[slot]! : 0)
        throttledAttempts.push(current ? state.slotThrottledAttempts[slot]! : 0)
      }
      const out: ScopeSnapshot = {
        scope, activeClients: aggregate.activeClients, sources: state.sources.size, attempts, throttledAttempts,
        bucketMs: o.reportBucketMs, lastReportAt: state.lastReportAt,
      }
      if (aggregate.quotaPerSecond !== undefined) out.quotaPerSecond = aggregate.quotaPerSecond
      if (aggregate.fairSharePerSecond !== undefined) out.fairSharePerSecond = aggregate.fairSharePerSecond
      return out
    })
  }

  const aggregator: Aggregator = {
    report: (input, now, configured, from) => {
      const result = record(input, now, configured, from)
      return result.ok ? result.reply : read(input.scope, now, configured)
    },
    record,
    read,
    snapshot,
    prune,
    scopeCount: () => scopes.size,
    clientCount: () => trackedTotal,
    scopeClaimCount: () => claimTotal,
    options: o,
  }
  inspectors.set(aggregator, (scope) => {
    const state = scopes.get(scope)
    if (!state) return undefined
    const { capClients, capWeight, countedClients, countedWeight, medianQuotaPerSecond } = state
    return {
      kept: { capClients, capWeight, countedClients, countedWeight, medianQuotaPerSecond },
      fromSets: boundsOf(state),
      sources: [...state.sources.values()].map(({ trusted, clients, weight, quota }) => ({ trusted, clients, weight, quota })),
    }
  })
  return aggregator
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
