// When an idle lane may be forgotten. `idleMs` (the user's bound, 60 s by default) keeps memory
// bounded however many scopes a client meets; but a lane that paces is itself the evidence of how
// long its gaps are. Paced at r per second, a caller whose demand matches its share leaves gaps of
// a few spacings (1 / r) as a matter of course, and on a slow quota (one call a minute, a share of
// one per 80 s) every such gap passed 60 s: the lane was evicted between its own calls, and a
// fresh pacer met the quota anew with a burst of 429s (the routes scenario at k = 60: the origin's
// lane, paced for `GET /catalog` after `POST /orders` left it). So a pacing lane is kept until it
// has been idle for IDLE_SPACINGS of its own spacings as well: counted in the lane's own pace, it
// means the same whether the quota refills per second or per hour. A free lane (no pacing) goes
// after `idleMs` as before; a pacing lane's stay is bounded by its pacer's rate floor.
import type { Lane } from './lane.js'

/**
 * Spacings a pacing lane must stay idle before it may be evicted. A Poisson caller whose demand
 * matches its share leaves a gap this long with probability e^−8 ≈ 3 × 10^−4 per call.
 */
export const IDLE_SPACINGS = 8

/** Whether `lane`, idle (nothing queued or in flight), may be evicted at `now`. */
export function mayEvict(lane: Lane, now: number, idleMs: number): boolean {
  const pacer = lane.pacer
  if (pacer === undefined || !lane.isIdle()) return false
  const idleForMs = now - lane.lastActiveAt
  if (idleForMs < idleMs) return false
  const rate = pacer.ratePerSecond
  // A free lane (rate Infinity) has nothing of its pace to lose.
  return !(rate > 0) || idleForMs >= (IDLE_SPACINGS * 1000) / rate
}
