// Google SRE client-side adaptive throttling (SRE book, ch. 21 "Handling Overload"):
// over the last two minutes the client counts `requests` (tries, locally rejected ones
// included) and `accepts` (tries the backend accepted); a new try is rejected locally
// with probability p = max(0, (requests − K·accepts) / (requests + 1)), K = 2.
//
// Modelling choices (docs/algorithms.md): SRE drops, the harness never drops, so a local
// rejection is a wait of one backoff step (`rejectionDelayMs`) before the next try, and it
// counts in `requests`. Because `delayMs` must be a pure query, the tries are decided when
// the previous attempt's result arrives (the moment a sequential client tries again): the
// chain of local rejections is drawn then, each at p recomputed with the rejections before
// it, and the lane is held until the first try that passes. Retries after a server 429
// use UB's backoff, so the comparison with UB isolates the throttling.
import type { Pacer, PacerInit, PacerState, Signal, Strategy } from '../../core/types.js'
import { createBackoff, resolveExponentialOptions, type ExponentialOptions } from '../../core/pacers/exponential.js'

export interface SreThrottlingOptions extends ExponentialOptions {
  /** K: accepts are multiplied by this; 2 lets about one rejected try reach the backend per accepted one. Default 2. */
  k?: number
  /** Window of the counts. Default 120 000 ms (two minutes). */
  windowMs?: number
  /** Wait after a local rejection before the next try. Default 1000 ms (UB's backoff base). */
  rejectionDelayMs?: number
  /** Longest chain of local rejections drawn at once (a bound on work, never reached in practice). Default 1000. */
  maxRejectionChain?: number
}

export const SRE_THROTTLING_DEFAULTS = { k: 2, windowMs: 120_000, rejectionDelayMs: 1000, maxRejectionChain: 1000 }

const KIND = 'sre-throttling'

/** The SRE book's rejection probability. */
export function sreRejectionProbability(requests: number, accepts: number, k: number): number {
  return Math.max(0, (requests - k * accepts) / (requests + 1))
}

export function sreThrottling(options: SreThrottlingOptions = {}): Strategy {
  const backoffOptions = resolveExponentialOptions(options)
  const k = options.k ?? SRE_THROTTLING_DEFAULTS.k
  const windowMs = options.windowMs ?? SRE_THROTTLING_DEFAULTS.windowMs
  const rejectionDelayMs = options.rejectionDelayMs ?? SRE_THROTTLING_DEFAULTS.rejectionDelayMs
  const maxChain = options.maxRejectionChain ?? SRE_THROTTLING_DEFAULTS.maxRejectionChain
  return {
    name: KIND,
    create(init: PacerInit): Pacer {
      const random = init.random
      const backoff = createBackoff(backoffOptions, random)
      // Times of tries (sent or locally rejected) and of accepts, oldest first.
      const requests: number[] = []
      const accepts: number[] = []
      let heldUntil = 0
      let localRejections = 0

      const countSince = (times: number[], cutoff: number, upTo: number): number => {
        let n = 0
        for (let i = times.length - 1; i >= 0; i--) {
          const at = times[i] as number
          if (at <= cutoff) break
          if (at <= upTo) n++
        }
        return n
      }
      const prune = (now: number): void => {
        while (requests.length > 0 && (requests[0] as number) <= now - windowMs) requests.shift()
        while (accepts.length > 0 && (accepts[0] as number) <= now - windowMs) accepts.shift()
      }
      const probability = (at: number): number =>
        sreRejectionProbability(countSince(requests, at - windowMs, at), countSince(accepts, at - windowMs, at), k)

      /** Draw the next try's fate now; hold the lane through any chain of local rejections. */
      const decideNextTry = (now: number): void => {
        let at = Math.max(now, heldUntil)
        for (let i = 0; i < maxChain && random() < probability(at); i++) {
          requests.push(at)
          localRejections++
          at += rejectionDelayMs
        }
        heldUntil = at
      }

      return {
        delayMs(now) {
          return Math.max(0, heldUntil - now)
        },
        onSend(now) {
          prune(now)
          requests.push(now)
        },
        onResult(now, signal: Signal) {
          if (signal.kind === 'ok') accepts.push(now)
          prune(now)
          decideNextTry(now)
        },
        retryDelayMs: (now, failures, signal) => backoff.retryDelayMs(now, failures, signal),
        toJSON(now): PacerState {
          return { kind: KIND, version: 1, savedAt: now, localRejections, probability: probability(now) }
        },
        ratePerSecond: Infinity,
        tokens: () => Infinity,
      }
    },
  }
}
