// The control strategy: no pacing, no backoff. Useful as a baseline and to switch
// polite-fetch's pacing off without changing call sites.
import type { Pacer, PacerInit, PacerState, Strategy } from '../types.js'

const STATE_VERSION = 1

export function none(): Strategy {
  return {
    name: 'none',
    create(_init: PacerInit): Pacer {
      return {
        delayMs: () => 0,
        onSend: () => {},
        onResult: () => {},
        retryDelayMs: () => 0,
        toJSON: (now: number): PacerState => ({ kind: 'none', version: STATE_VERSION, savedAt: now }),
        ratePerSecond: Infinity,
        tokens: () => Infinity,
      }
    },
  }
}
