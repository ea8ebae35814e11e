// One run stretched in time by k: the quota refills k times slower, and every time
// the workload or the harness sets is k times longer — arrivals (so their window),
// the start stagger, the stepped refill interval and the run's virtual-time limit.
// The burst (capacity) and the per-step amount stay, so k = 1 is the paper's scale and
// the same arrivals meet the same quota at every k, only slower or faster. The round
// trip is the network's, not the quota's, and stays. Every grid scales through here.
import type { QuotaConfig } from './types.js'
import type { Workload } from './workload.js'

export interface ScaledRun {
  workload: Workload
  quota: QuotaConfig
  maxDurationMs: number
}

/** The paper's stepped refill interval when the quota names none (Envoy's 60 s). */
export const DEFAULT_STEP_INTERVAL_MS = 60_000

export function assertScale(k: number): void {
  if (!(Number.isFinite(k) && k > 0)) throw new RangeError(`scale must be a positive finite number, got ${k}`)
}

export function scaleQuota(quota: QuotaConfig, k: number): QuotaConfig {
  assertScale(k)
  return {
    capacity: quota.capacity,
    perMinute: quota.perMinute / k,
    stepIntervalMs: (quota.stepIntervalMs ?? DEFAULT_STEP_INTERVAL_MS) * k,
  }
}

export function scaleWorkload(workload: Workload, k: number): Workload {
  assertScale(k)
  if (k === 1) return workload
  return {
    ...workload,
    clients: workload.clients.map((c) => ({ ...c, startMs: c.startMs * k, arrivalsMs: c.arrivalsMs.map((t) => t * k) })),
  }
}

export function scaleRun(run: ScaledRun, k: number): ScaledRun {
  assertScale(k)
  return { workload: scaleWorkload(run.workload, k), quota: scaleQuota(run.quota, k), maxDurationMs: run.maxDurationMs * k }
}
