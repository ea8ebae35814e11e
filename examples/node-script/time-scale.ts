// The local quota server can run S times faster than real time. Every client-side time
// constant is then compressed by S as well (p-retry's backoff, ATB's windows and rates),
// so a run shows what each client does at real speed. At S = 1 nothing changes.
import { ATB_DEFAULTS, type AtbOptions } from '../../src/core/pacers/index.js'

/** Durations (`…Ms`) divided by S, rates (`…PerSecond`) multiplied by S. */
export function timeScaled<T extends object>(defaults: T, timeScale: number): Partial<T> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(defaults)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) continue
    if (key.endsWith('Ms')) out[key] = value / timeScale
    else if (key.endsWith('PerSecond')) out[key] = value * timeScale
  }
  return out as Partial<T>
}

export function timeScaledAtbOptions(timeScale: number): AtbOptions {
  return timeScaled(ATB_DEFAULTS, timeScale) as AtbOptions
}
