// The same job through polite-fetch: one `install()` and the plain global `fetch`
// is paced. Retries happen inside the interceptor; the limiter's events count them.
import { ATB_DEFAULTS, atb } from '../../src/core/pacers/index.js'
import { install, fileStore } from '../../src/node/index.js'
import { runItems, type JobOptions, type RunSummary } from './job.js'

export interface PoliteOptions extends JobOptions {
  /** JSON file that keeps the learned rate between runs (a cron job resumes, not re-probes). */
  statePath?: string | undefined
  /** Telemetry endpoint URL: AATB coordination between workers. */
  telemetryUrl?: string | undefined
  /** How much faster than real time the quota server runs (1 for a real API). */
  timeScale: number
}

/**
 * ATB's time constants are wall-clock; against a quota compressed S times they are
 * compressed by S as well, so the run shows what ATB does at real speed (p-retry's
 * backoff gets the same treatment). At S = 1 this is exactly `atb()`.
 */
export function timeScaledAtb(timeScale: number) {
  const d = ATB_DEFAULTS
  const s = timeScale
  return atb({
    windowMs: d.windowMs / s,
    minSpanMs: d.minSpanMs / s,
    paceWindowMs: d.paceWindowMs / s,
    calmAfterMs: d.calmAfterMs / s,
    maxRetryBackoffMs: d.maxRetryBackoffMs / s,
    growthPerSecond: d.growthPerSecond * s,
    recoveryPerSecond: d.recoveryPerSecond * s,
    minRatePerSecond: d.minRatePerSecond * s,
  })
}

export async function runPolite(options: PoliteOptions): Promise<RunSummary> {
  const store = options.statePath ? fileStore(options.statePath) : undefined
  const strategy = options.telemetryUrl
    ? await telemetryStrategy(options.telemetryUrl, options.timeScale)
    : timeScaledAtb(options.timeScale)
  const paced = install({ strategy, ...(store && { store }) })
  let attempts = 0
  let throttled = 0
  const offAttempt = paced.limiter.on('attempt', () => attempts++)
  const offThrottled = paced.limiter.on('throttled', () => throttled++)
  try {
    const { failed, durationMs } = await runItems(options, async (url) => {
      const res = await fetch(url)
      await res.arrayBuffer()
      return res.status === 200
    })
    return { name: 'polite-fetch', items: options.items, failed, attempts, throttled, durationMs }
  } finally {
    offAttempt()
    offThrottled()
    paced.uninstall()
    await paced.limiter.close()
    await store?.flush()
  }
}

// AATB with a telemetry link; loaded on demand so the ATB path needs no telemetry code.
async function telemetryStrategy(url: string, timeScale: number) {
  const { aatbWithTelemetry } = await import('./telemetry-strategy.js')
  return aatbWithTelemetry(url, timeScale)
}
