// Token buckets per key (client id, source address), pure: `now` is an argument.
// Memory is bounded: beyond `maxKeys` the least recently used key is forgotten, which
// can only ever let a forgotten key start again with a full bucket.
export interface KeyedRateLimiterOptions {
  perSecond: number
  burst: number
  /** Keys remembered. Default 100 000. */
  maxKeys?: number
}

export interface KeyedRateLimiter {
  /** Take one token for `key` at `now`: 0 when allowed, else ms until a token is available. */
  take(key: string, now: number): number
  size(): number
}

interface Bucket { tokens: number; at: number }

export function createKeyedRateLimiter(options: KeyedRateLimiterOptions): KeyedRateLimiter {
  const { perSecond, burst } = options
  const maxKeys = options.maxKeys ?? 100_000
  const buckets = new Map<string, Bucket>()
  return {
    take(key, now) {
      let bucket = buckets.get(key)
      if (bucket) {
        buckets.delete(key) // re-inserted below: Map order doubles as LRU order
        bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) * perSecond) / 1000)
        bucket.at = now
      } else {
        if (buckets.size >= maxKeys) {
          const oldest = buckets.keys().next().value
          if (oldest !== undefined) buckets.delete(oldest)
        }
        bucket = { tokens: burst, at: now }
      }
      buckets.set(key, bucket)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return 0
      }
      return Math.ceil(((1 - bucket.tokens) * 1000) / perSecond)
    },
    size: () => buckets.size,
  }
}
