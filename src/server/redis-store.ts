// The scaled-out store: several server instances share one Redis (or Redis Cluster).
// Availability rules: no offline queue and no per-command retries, so while Redis is
// down every call rejects at once and the handler answers 503 instead of hanging; a
// command timeout covers a Redis that is up but stalled; the reconnect strategy keeps
// trying forever, so the store recovers by itself when Redis comes back.
import { Redis } from 'ioredis'
import type { RedisOptions } from 'ioredis'
import { addFairShare, OVERFLOW_CLIENT_ID, resolveAggregatorOptions } from '../telemetry/aggregator.js'
import type { AggregatorOptions } from '../telemetry/aggregator.js'
import { learnableQuotaPerSecond, PROTOCOL_VERSION } from '../telemetry/protocol.js'
import type { TelemetryReply } from '../telemetry/protocol.js'
import { READ_SCRIPT, REPORT_SCRIPT } from './redis-scripts.js'
import { StoreUnavailableError } from './telemetry-store.js'
import type { TelemetryStore } from './telemetry-store.js'

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
  /** Longest pause between reconnect attempts. Default 500 ms. */
  maxReconnectDelayMs?: number
  /** Extra ioredis options (merged last, so they can override ours). */
  redis?: RedisOptions
}

interface ScriptedRedis extends Redis {
  politeReport(...args: (string | number)[]): Promise<string[]>
  politeRead(...args: (string | number)[]): Promise<string[]>
}

export interface RedisStore extends TelemetryStore {
  /** The ioredis client (for health probes and tests). */
  readonly client: Redis
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
  client.defineCommand('politeReport', { numberOfKeys: 4, lua: REPORT_SCRIPT })
  client.defineCommand('politeRead', { numberOfKeys: 4, lua: READ_SCRIPT })

  const reportBuckets = o.reportWindowMs / o.reportBucketMs
  const activeBuckets = o.activeWindowMs / o.activeBucketMs
  const idleMs = Math.max(o.activeWindowMs + o.activeBucketMs, o.reportWindowMs + 2 * o.reportBucketMs)

  // Key names per scope, memoised (bounded: cleared when full) since every report needs them.
  const keyCache = new Map<string, readonly string[]>()
  function keys(scope: string): readonly string[] {
    let cached = keyCache.get(scope)
    if (!cached) {
      // encodeURIComponent escapes { and }, so a scope cannot break out of its hash tag.
      const tag = `${prefix}{${encodeURIComponent(scope)}}`
      cached = [`${tag}:c`, `${tag}:z`, `${tag}:b`, `${tag}:m`]
      if (keyCache.size >= 4096) keyCache.clear()
      keyCache.set(scope, cached)
    }
    return cached
  }

  function common(now: number): (string | number)[] {
    return [now, o.reportBucketMs, reportBuckets, o.activeBucketMs, activeBuckets, o.includeCurrentBucket ? '1' : '0']
  }

  function toReply(scope: string, values: string[], configured: number | undefined): TelemetryReply {
    const [attempts, throttled, active, weightSum, weight, learned] = values
    const reply: TelemetryReply = {
      v: PROTOCOL_VERSION,
      scope,
      activeClients: Math.max(1, Number(active)),
      totalAttempts: Number(attempts),
      throttledReports: Number(throttled),
      windowMs: o.reportWindowMs,
    }
    addFairShare(reply, configured ?? (learned ? Number(learned) : undefined), Number(weight), Number(weightSum))
    return reply
  }

  async function call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (cause) {
      throw new StoreUnavailableError('redis unavailable', { cause })
    }
  }

  return {
    client,
    report: (report, now, configured) => call(async () => {
      const weight = Math.min(o.maxBacklogWeight, Math.max(1, report.backlog ?? 0))
      // A hint no reply could carry is not stored (see learnableQuotaPerSecond).
      const learned = report.quota && learnableQuotaPerSecond(report.quota)
      const hint = learned === undefined ? '' : String(learned)
      const values = await client.politeReport(
        ...keys(report.scope), ...common(now),
        report.clientId, report.attempts, report.throttled, weight, hint,
        o.maxAttemptsPerClientPerBucket, o.maxClientsPerScope, idleMs, OVERFLOW_CLIENT_ID,
      )
      return toReply(report.scope, values, configured)
    }),
    read: (scope, now, configured) => call(async () => {
      const values = await client.politeRead(...keys(scope), ...common(now))
      return toReply(scope, values, configured)
    }),
    gauges: () => ({ redis_connected: client.status === 'ready' ? 1 : 0, redis_errors: errors }),
    close: async () => {
      client.disconnect()
    },
  }
}
