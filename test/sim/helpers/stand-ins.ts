// Tiny stand-ins for the parts other modules provide, so the engine's own behaviour
// is tested in isolation: a signal path that only knows 429 + Retry-After, and
// pacers that record what the engine asks of them.
import type { Pacer, PacerInit, Signal, Strategy } from '../../../src/core/types.js'
import type { SignalPath } from '../../../src/sim/run-simulation.js'
import type { RunStrategy } from '../../../src/sim/run-strategy.js'

export const standInSignals: SignalPath = {
  feedbackHeaders(admission, feedback) {
    if (admission.admitted || feedback === 'status-only' || admission.retryAfterMs === undefined) return []
    return [['retry-after', String(Math.ceil(admission.retryAfterMs / 1000))]]
  },
  readSignals(status, headers, now): Signal {
    if (status !== 429) return { kind: 'ok', status }
    const retryAfter = headers.get('retry-after')
    return retryAfter === null
      ? { kind: 'throttled', status }
      : { kind: 'throttled', status, retryAt: now + Number(retryAfter) * 1000 }
  },
}

export interface PacerLog {
  sends: Array<{ client: number; at: number }>
  results: Array<{ client: number; at: number; kind: string }>
}

/** A pacer that never waits (or waits `spacingMs` between sends) and logs every call. */
export function recordingStrategy(log: PacerLog, options: { spacingMs?: number; retryDelayMs?: number } = {}): RunStrategy {
  let created = 0
  const strategy: Strategy = {
    name: 'recording',
    create(_init: PacerInit): Pacer {
      const client = created++
      let lastSend = -Infinity
      return {
        delayMs: (now) => Math.max(0, lastSend + (options.spacingMs ?? 0) - now),
        onSend(now) {
          lastSend = now
          log.sends.push({ client, at: now })
        },
        onResult(now, signal) {
          log.results.push({ client, at: now, kind: signal.kind })
        },
        retryDelayMs: () => options.retryDelayMs ?? 0,
        toJSON: (now) => ({ kind: 'recording', version: 1, savedAt: now }),
        ratePerSecond: Infinity,
        tokens: () => Infinity,
      }
    },
  }
  return { strategy }
}
