// Counters of the quota server: totals, a per-second series for charts, and counts by
// endpoint limit. O(1) per request; the series is capped so a long-running demo (or a
// fake clock that jumps) cannot grow it without bound.

export interface SecondCounts {
  /** Whole wall-clock seconds since the server started (or was last reset). */
  second: number
  admitted: number
  rejected: number
}

export interface AdmissionCounts {
  admitted: number
  rejected: number
}

export interface StatsSnapshot {
  admitted: number
  rejected: number
  perSecond: SecondCounts[]
  /** By endpoint-limit name; requests outside every endpoint limit count under `global`. */
  byEndpoint: Record<string, AdmissionCounts>
}

/** A day of seconds: enough for any demo or benchmark run. */
export const MAX_SERIES_SECONDS = 86_400

export interface StatsRecorder {
  record(wallNow: number, admitted: boolean, endpoint: string): void
  snapshot(): StatsSnapshot
}

export function statsRecorder(startedAt: number): StatsRecorder {
  let admitted = 0
  let rejected = 0
  const seconds = new Map<number, SecondCounts>()
  const byEndpoint = new Map<string, AdmissionCounts>()
  let current: SecondCounts | undefined

  const bucketFor = (second: number): SecondCounts => {
    if (current !== undefined && current.second === second) return current
    let bucket = seconds.get(second)
    if (bucket === undefined) {
      bucket = { second, admitted: 0, rejected: 0 }
      seconds.set(second, bucket)
      if (seconds.size > MAX_SERIES_SECONDS) seconds.delete(seconds.keys().next().value as number)
    }
    current = bucket
    return bucket
  }

  return {
    record(wallNow, ok, endpoint) {
      const bucket = bucketFor(Math.floor((wallNow - startedAt) / 1000))
      let counts = byEndpoint.get(endpoint)
      if (counts === undefined) {
        counts = { admitted: 0, rejected: 0 }
        byEndpoint.set(endpoint, counts)
      }
      if (ok) {
        admitted++
        bucket.admitted++
        counts.admitted++
      } else {
        rejected++
        bucket.rejected++
        counts.rejected++
      }
    },
    snapshot() {
      const perSecond = [...seconds.values()].map((s) => ({ ...s })).sort((a, b) => a.second - b.second)
      const endpoints: Record<string, AdmissionCounts> = {}
      for (const [name, counts] of byEndpoint) endpoints[name] = { ...counts }
      return { admitted, rejected, perSecond, byEndpoint: endpoints }
    },
  }
}
