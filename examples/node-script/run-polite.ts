// The same job through polite-fetch: one `install()` and the plain global `fetch`
// is paced. Retries happen inside the interceptor; the limiter's events count them.
import { install, fileStore } from '../../src/node/index.js'
import { runItems, type JobOptions, type RunSummary } from './job.js'

export interface PoliteOptions extends JobOptions {
  /** JSON file that keeps the learned rate between runs (a cron job resumes, not re-probes). */
  statePath?: string | undefined
  /** Telemetry endpoint URL: AATB coordination between workers. */
  telemetryUrl?: string | undefined
}

export async function runPolite(options: PoliteOptions): Promise<RunSummary> {
  const store = options.statePath ? fileStore(options.statePath) : undefined
  const strategy = options.telemetryUrl ? await telemetryStrategy(options.telemetryUrl) : undefined
  const paced = install({ ...(store && { store }), ...(strategy && { strategy }) })
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
async function telemetryStrategy(url: string) {
  const { aatbWithTelemetry } = await import('./telemetry-strategy.js')
  return aatbWithTelemetry(url)
}
