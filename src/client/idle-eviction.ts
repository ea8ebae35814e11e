// When an idle lane may be forgotten. `idleMs` (the user's bound, 60 s by default) keeps memory
// bounded however many scopes a client meets; but a lane's own traffic says how long its ordinary
// gaps are. A caller whose demand matches its pace leaves gaps of a few spacings as a matter of
// course, and on a slow quota (one call a minute, paced at one per 80 s) every such gap passed
// 60 s: the lane was evicted between its own calls. Paced, the fresh pacer met the quota anew
// with a burst of 429s (the routes scenario at k = 60: the origin's lane, pacing `GET /catalog`
// after `POST /orders` left it); free, the lane lost the clock its pacer measures the quota's
// time scale with (first admission to first 429, atb-time-scale.ts), so no lane there measured
// one. So a lane is kept until it has been idle for IDLE_SPACINGS of its own spacings as well:
// its pacer's (1 / rate) or its traffic's (its life over its attempts), whichever is longer.
// Counted in the lane's own pace, this means the same whether the quota refills per second or
// per hour. A lane used once goes after `idleMs` as before; a lane's stay is bounded by its
// pacer's rate floor and by how sparse its own traffic was.
import type { Lane } from './lane.js'

/**
 * Spacings a lane must stay idle before it may be evicted. A Poisson caller leaves a gap this
 * long with probability e^−8 ≈ 3 × 10^−4 per call.
 */
export const IDLE_SPACINGS = 8

/** Whether `lane`, idle (nothing queued or in flight), may be evicted at `now`. */
export function mayEvict(lane: Lane, now: number, idleMs: number): boolean {
  const pacer = lane.pacer
  if (pacer === undefined || !lane.isIdle()) return false
  const idleForMs = now - lane.lastActiveAt
  if (idleForMs < idleMs) return false
  const rate = pacer.ratePerSecond
  const paceMs = rate > 0 ? 1000 / rate : 0
  const trafficMs = lane.attempts > 1 ? (lane.lastActiveAt - lane.createdAt) / (lane.attempts - 1) : 0
  return idleForMs >= IDLE_SPACINGS * Math.max(paceMs, trafficMs)
}
