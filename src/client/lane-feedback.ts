// What an attempt's signal does to its lane: the pacer learns from it, the counters
// and events record it, and a server's retryAt gates the whole lane (plus jitter).
import { jitteredRetryAt } from '../core/retry-policy.js'
import type { Pacer, Signal } from '../core/types.js'
import type { Call } from './call.js'
import type { LanePersistence } from './lane-persistence.js'
import type { LimiterEmitter } from './limiter-events.js'
import type { ResolvedLimiterOptions } from './options.js'

export interface FeedbackContext {
  o: ResolvedLimiterOptions
  emitter: LimiterEmitter
  persistence: LanePersistence | undefined
}

/** Feeds `signal` to the call's lane; returns true when it raised the lane's gate. */
export function feedLane(ctx: FeedbackContext, call: Call<unknown>, signal: Signal, now: number): boolean {
  const lane = call.lane
  const pacer = lane.pacer as Pacer
  const emitter = ctx.emitter
  const previousPerSecond = pacer.ratePerSecond
  pacer.onResult(now, signal)
  ctx.persistence?.markDirty(lane)
  let gated = false
  switch (signal.kind) {
    case 'ok':
      lane.successes++
      break
    case 'error':
      lane.errors++
      break
    default: {
      if (signal.kind === 'throttled') lane.throttled++
      else lane.overloaded++
      const retryAt = signal.retryAt
      if (typeof retryAt === 'number' && retryAt > now) {
        // Never before retryAt; the random extra keeps clients told the same
        // Retry-After from waking in the same millisecond (options.jitterRatio).
        const o = ctx.o
        const until = jitteredRetryAt(now, retryAt, o.jitterRatio, o.maxJitterMs, o.random)
        if (until > lane.gateUntil) {
          lane.gateUntil = until
          gated = true
        }
      }
      if (emitter.has('throttled')) {
        emitter.emit('throttled', {
          scope: lane.scope,
          label: call.job.label,
          attempt: call.attempts,
          kind: signal.kind,
          status: signal.status,
          retryAt: signal.retryAt,
        })
      }
    }
  }
  const ratePerSecond = pacer.ratePerSecond
  if (ratePerSecond !== previousPerSecond && emitter.has('rate')) {
    emitter.emit('rate', { scope: lane.scope, ratePerSecond, previousPerSecond })
  }
  return gated
}
