// The local quota server can run S times faster than real time. Every client-side time
// constant is then compressed by S as well (p-retry's backoff, ATB's windows and growth),
// so a run shows what each client does at real speed. At S = 1 nothing changes.
import { ATB_DEFAULTS, type AtbOptions } from '../../src/core/pacers/index.js'

export function timeScaledAtbOptions(timeScale: number): AtbOptions {
  const d = ATB_DEFAULTS
  const s = timeScale
  return {
    windowMs: d.windowMs / s,
    minSpanMs: d.minSpanMs / s,
    paceWindowMs: d.paceWindowMs / s,
    calmAfterMs: d.calmAfterMs / s,
    maxRetryBackoffMs: d.maxRetryBackoffMs / s,
    growthPerSecond: d.growthPerSecond * s,
    recoveryPerSecond: d.recoveryPerSecond * s,
    minRatePerSecond: d.minRatePerSecond * s,
  }
}
