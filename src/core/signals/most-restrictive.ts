// Choosing which announced limit the Signal's remaining/resetAt/limit describe,
// and tidying the list of announced policies.
import type { QuotaPolicy } from '../types.js'
import { REQUESTS_UNIT, type LimitObservation } from './limit-observation.js'

/**
 * The request limit closest to exhaustion: smallest `remaining`; on a tie the one
 * that resets later (it keeps us waiting longer; an unknown reset counts as
 * earliest). Limits in other units (tokens, bytes, concurrency) do not count
 * attempts, so they never pace them.
 */
export function mostRestrictive(limits: readonly LimitObservation[]): LimitObservation | undefined {
  let best: LimitObservation | undefined
  for (const candidate of limits) {
    if (candidate.unit !== REQUESTS_UNIT || candidate.remaining === undefined) continue
    if (best === undefined || best.remaining === undefined || candidate.remaining < best.remaining) {
      best = candidate
    } else if (
      candidate.remaining === best.remaining &&
      (candidate.resetAt ?? -Infinity) > (best.resetAt ?? -Infinity)
    ) {
      best = candidate
    }
  }
  return best
}

/**
 * One entry per distinct policy: servers often announce the same limit twice
 * (express-rate-limit sends the IETF and the X- headers together).
 */
export function distinctPolicies(policies: readonly QuotaPolicy[]): QuotaPolicy[] {
  const seen = new Set<string>()
  const distinct: QuotaPolicy[] = []
  for (const policy of policies) {
    const key = `${policy.name}\u0000${policy.quota}\u0000${policy.windowMs ?? ''}\u0000${policy.unit ?? ''}`
    if (seen.has(key)) continue
    seen.add(key)
    distinct.push(policy)
  }
  return distinct
}
