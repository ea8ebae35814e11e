// The scaled-out store: several server instances share one Redis (or Redis Cluster).
// Availability rules: no offline queue and no per-command retries, so while Redis is
// down every call rejects at once and the handler answers 503 instead of hanging; a
// command timeout covers a Redis that is up but stalled; the reconnect strategy keeps
// trying forever, so the store recovers by itself when Redis comes back.
import { Redis } from 'ioredis'
import type { RedisOptions } from 'ioredis'
import { addFairShare, aggregatorIdleMs, backlogWeight, clientKeyOf, OVERFLOW_CLIENT_ID, resolveAggregatorOptions, sourceKeyOf } from '../telemetry/aggregator.js'
import type { AggregatorOptions, RecordResult } from '../telemetry/aggregator.js'
import { learnableQuotaPerSecond, PROTOCOL_VERSION } from '../telemetry/protocol.js'
import type { TelemetryReply } from '../telemetry/protocol.js'
import { GAUGE_SCRIPT, READ_SCRIPT, REPORT_SCRIPT } from './redis-scripts.js'
import { StoreLayoutError, StoreUnavailableError } from './telemetry-store.js'
import type { TelemetryStore, TenantScopeSnapshot } from './telemetry-store.js'

export interface RedisStoreOptions extends AggregatorOptions {
  /** `redis://host:port[/db]`. Default `redis://127.0.0.1:6379`. */
  url?: string
  /** Key prefix. Default `pf:`. */
  prefix?: string
  /**
   * A command slower than this fails (→ 503): covers a Redis that is up but stalled. A Redis
   * that is down fails at once (no offline queue), whatever this says. Default 250 ms.
   */
  commandTimeoutMs?: number
  /**
   * How long an idle scope's keys stay in Redis. Liveness is decided by the scripts' clock
   * (a scope's last report), so this only collects garbage; it must exceed the idle window
   * (70 s). Default twice the idle window.
   */
  keyTtlMs?: number
  /** Longest pause between reconnect attempts. Default 500 ms. */
  maxReconnectDelayMs?: number
  /** Extra ioredis options (merged last, so they can override ours). */
  redis?: RedisOptions
}

/**
 * The layout of the keys this version's scripts keep, marked in Redis at `<prefix>layout`. 3: the
 * per-tenant claim books (maxScopeClaims). Layouts 1 and 2 wrote no mark: a Redis they wrote is
 * adopted (a scope of layout 1 is ranked when next reported, an address's claims are counted at its
 * next claim), but a version of either running beside this one is not detected.
 */
export const REDIS_LAYOUT = '3'

interface ScriptedRedis extends Redis {
  politeReport(...args: (string | number)[]): Promise<string[]>
  politeRead(...args: (string | number)[]): Promise<string[]>
  politeGauges(...args: (string | number)[]): Promise<string[]>
}

export interface RedisStore extends TelemetryStore {
  /** The ioredis client (for health probes and tests). */
  readonly client: Redis
  /**
   * Connects (waiting up to a second) and marks this version's layout at `<prefix>layout`, or
   * rejects with StoreLayoutError, naming that key, when another version marked it. Every call
   * checks first too; `serve` awaits this before listening, so a server never starts on it.
   */
  ready(): Promise<void>
  close(): Promise<void>
}

export function createRedisStore(options: RedisStoreOptions = {}): RedisStore {
  const o = resolveAggregatorOptions(options)
  const prefix = options.prefix ?? 'pf:'
  const maxReconnectDelayMs = options.maxReconnectDelayMs ?? 500
  const client = new Redis(options.url ?? 'redis://127.0.0.1:6379', {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 250,
    connectTimeout: 1_000,
    retryStrategy: (times) => Math.min(25 * times, maxReconnectDelayMs),
    ...options.redis,
  }) as ScriptedRedis
  let errors = 0
  // Without a listener ioredis prints every connection error; the count feeds /metrics.
  client.on('error', () => { errors++ })
  client.defineCommand('politeReport', { numberOfKeys: 16, lua: REPORT_SCRIPT })
  client.defineCommand('politeRead', { numberOfKeys: 14, lua: READ_SCRIPT })
  client.defineCommand('politeGauges', { numberOfKeys: 2, lua: GAUGE_SCRIPT })

  const reportBuckets = o.reportWindowMs / o.reportBucketMs
  const activeBuckets = o.activeWindowMs / o.activeBucketMs
  const idleMs = aggregatorIdleMs(o)
  const keyTtlMs = Math.max(options.keyTtlMs ?? 2 * idleMs, idleMs)

  // Every key of a tenant shares its hash tag; encodeURIComponent escapes { and }, so
  // neither a tenant nor a scope nor a source can break out of it. Memoised (bounded:
  // cleared when full) since every report needs them.
  const keyCache = new Map<string, string[]>()
  function keys(tenant: string, scope: string, source: string): string[] {
    const cacheKey = `${tenant}\u0000${scope}`
    let cached = keyCache.get(cacheKey)
    if (!cached) {
      const tag = `${prefix}{${encodeURIComponent(tenant)}}`
      const base = `${tag}:s:${encodeURIComponent(scope)}`
      cached = [`${base}:c`, `${base}:z`, `${base}:b`, `${base}:m`, `${base}:s`, `${tag}:scopes`, `${tag}:counts`, `${tag}:total`, `${tag}:a:`,
        `${base}:rc`, `${base}:rw`, `${base}:rq`, `${base}:uc`, `${base}:uw`, `${tag}:claim-order`, `${tag}:claim-books`]
      if (keyCache.size >= 4096) keyCache.clear()
      keyCache.set(cacheKey, cached)
    }
    const out = cached.slice()
    out[8] = `${cached[8]}${encodeURIComponent(source)}`
    return out
  }

  function common(now: number): (string | number)[] {
    return [now, o.reportBucketMs, reportBuckets, o.activeBucketMs, activeBuckets, o.includeCurrentBucket ? '1' : '0',
      idleMs, o.sourceMedianMultiple, o.minQuotaSources, keyTtlMs]
  }

  /** values: attempts, 429 reports, counted clients, counted weight, weight, source weight, weight cap, trusted, quota. */
  function toReply(scope: string, values: string[], configured: number | undefined): TelemetryReply {
    const [attempts, throttled, active, weightSum, weight, sourceWeight, capWeight, trusted, learned] = values
    const reply: TelemetryReply = {
      v: PROTOCOL_VERSION,
      scope,
      activeClients: Math.max(1, Number(active)),
      totalAttempts: Number(attempts),
      throttledReports: Number(throttled),
      windowMs: o.reportWindowMs,
    }
    const w = Number(weight)
    const effective = trusted === '1' || Number(sourceWeight) <= Number(capWeight) ? w : (w * Number(capWeight)) / Number(sourceWeight)
    addFairShare(reply, configured ?? (learned ? Number(learned) : undefined), effective, Number(weightSum))
    return reply
  }

  // Another version's scripts keep other keys (the old script does not keep the claim books), and
  // each would read the other's as its own: a store that finds another mark refuses for good.
  const layoutKey = `${prefix}layout`
  let layoutRefused: StoreLayoutError | undefined
  let layoutMarked = false
  let layoutCheck: Promise<void> | undefined
  // A reconnect may reach another Redis (restarted empty, or marked by another version since): check again.
  client.on('ready', () => { layoutMarked = false })
  function checkLayout(): Promise<void> {
    layoutCheck ??= (async () => {
      await client.set(layoutKey, REDIS_LAYOUT, 'NX')
      const found = await client.get(layoutKey)
      if (found !== null && found !== REDIS_LAYOUT) {
        layoutRefused = new StoreLayoutError(
          `redis key '${layoutKey}' marks key layout ${JSON.stringify(found)}, this version keeps layout ${REDIS_LAYOUT}: ` +
            'two versions must not share one Redis (give this one another prefix, or delete the key once the other version is gone)',
        )
        throw layoutRefused
      }
      layoutMarked = true
    })().finally(() => { layoutCheck = undefined })
    return layoutCheck
  }

  async function call<T>(run: () => Promise<T>): Promise<T> {
    if (layoutRefused) throw layoutRefused
    try {
      if (!layoutMarked) await checkLayout()
      return await run()
    } catch (cause) {
      if (cause instanceof StoreLayoutError) throw cause
      throw new StoreUnavailableError('redis unavailable', { cause })
    }
  }

  // A read keeps away from the claim books (keys 15 and 16): only reports claim.
  const read = (tenant: string, scope: string, now: number) => client.politeRead(...keys(tenant, scope, '').slice(0, 14), ...common(now), scope)

  return {
    client,
    async ready() {
      if (client.status !== 'ready') {
        // Bounded: a Redis that is down now is the handler's 503 later, not a server that never starts.
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer)
            client.off('ready', done)
            resolve()
          }
          const timer = setTimeout(done, 1_000)
          client.once('ready', done)
        })
      }
      await call(async () => {})
    },
    report: (report, now, configured, origin) => call(async (): Promise<RecordResult> => {
      // A hint no reply could carry is not stored (see learnableQuotaPerSecond).
      const learned = report.quota && learnableQuotaPerSecond(report.quota)
      // Keyed as the memory aggregator keys them: a trusted reporter is a source of its own, and
      // an id is its source's (an id copied from another address is another client).
      const source = sourceKeyOf(origin)
      const values = await client.politeReport(
        ...keys(origin.tenant, report.scope, origin.source), ...common(now),
        report.scope, clientKeyOf(source, report.clientId), report.attempts, report.throttled, backlogWeight(o, report.backlog),
        learned === undefined ? '' : String(learned), report.seq === undefined ? '' : report.seq,
        source, origin.trusted ? '1' : '0', OVERFLOW_CLIENT_ID,
        o.maxAttemptsPerClientPerBucket, o.maxClientsPerScope, o.maxScopes, o.maxClients, o.maxScopesPerSource, o.maxClientsPerSource,
        o.maxScopeClaims,
      )
      if (values[0] === 'refused') return { ok: false, reason: 'scope-limit', retryAfterMs: Number(values[1]) }
      return { ok: true, duplicate: values[0] === 'dup', reply: toReply(report.scope, values.slice(1), configured) }
    }),
    read: (tenant, scope, now, configured) => call(async () => toReply(scope, await read(tenant, scope, now), configured)),
    snapshot: (tenants, now, limit, quotaOf) => call(async () => {
      const out: TenantScopeSnapshot[] = []
      for (const tenant of tenants) {
        const scopesKey = keys(tenant, '', '')[5]!
        const names = await client.zrevrangebyscore(scopesKey, '+inf', `(${now - idleMs}`, 'LIMIT', 0, limit)
        for (const scope of names) {
          const values = await read(tenant, scope, now)
          const aggregate = toReply(scope, values, quotaOf(scope))
          const attempts: number[] = []
          const throttledAttempts: number[] = []
          for (let i = 11; i + 1 < values.length; i += 2) {
            attempts.push(Number(values[i]))
            throttledAttempts.push(Number(values[i + 1]))
          }
          const snapshot: TenantScopeSnapshot = {
            tenant, scope, activeClients: aggregate.activeClients, sources: Number(values[9]), attempts, throttledAttempts,
            bucketMs: o.reportBucketMs, lastReportAt: Number(values[10]),
          }
          if (aggregate.quotaPerSecond !== undefined) snapshot.quotaPerSecond = aggregate.quotaPerSecond
          if (aggregate.fairSharePerSecond !== undefined) snapshot.fairSharePerSecond = aggregate.fairSharePerSecond
          out.push(snapshot)
        }
      }
      return out
    }),
    gauges: async (now, tenants = []) => {
      const gauges: Record<string, number> = { redis_connected: client.status === 'ready' ? 1 : 0, redis_errors: errors }
      // The handler answers a refused layout with 503s like an outage; the operator tells them apart here.
      if (layoutRefused) gauges.redis_layout_refused = 1
      if (client.status !== 'ready') return gauges
      try {
        let scopes = 0
        let tracked = 0
        for (const tenant of tenants) {
          const k = keys(tenant, '', '')
          const [live, ids] = await client.politeGauges(k[5]!, k[6]!, now, idleMs)
          scopes += Number(live)
          tracked += Number(ids)
        }
        gauges.scopes = scopes
        gauges.tracked_clients = tracked
      } catch {
        // the scrape still answers with the connection gauges
      }
      return gauges
    },
    close: async () => {
      client.disconnect()
    },
  }
}
