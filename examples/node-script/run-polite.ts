// The same job through polite-fetch: one `install()` and the plain global `fetch`
// is paced. Retries happen inside the interceptor; the limiter's events count them.
import { atb } from '../../src/core/pacers/index.js'
import { install, fileStore, type InstallOptions } from '../../src/node/index.js'
import { runItems, type JobOptions, type RunSummary } from './job.js'

export interface PoliteOptions extends JobOptions {
  /** JSON file that keeps the learned rate between runs (a cron job resumes, not re-probes). */
  statePath?: string | undefined
  /** Telemetry endpoint URL: AATB coordination between workers. */
  telemetryUrl?: string | undefined
  /** This process's name towards the telemetry endpoint. */
  clientId: string
}

export async function runPolite(options: PoliteOptions): Promise<RunSummary> {
  const store = options.statePath ? fileStore(options.statePath) : undefined
  // Without telemetry each process runs ATB on its own; with it, AATB shares what they see.
  // Both with their defaults: the pacer learns the quota's pace from the API's answers, so
  // nothing here depends on how fast the local quota server runs.
  const pacing: InstallOptions = options.telemetryUrl
    ? await telemetryOptions(options.telemetryUrl, options.clientId)
    : { strategy: atb() }
  const paced = install({ ...pacing, ...(store && { store }) })
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
    await paced.close()
    await store?.flush()
  }
}

// AATB with a telemetry link; loaded on demand so the ATB path needs no telemetry code.
async function telemetryOptions(url: string, clientId: string): Promise<InstallOptions> {
  const { aatbWithTelemetry } = await import('./telemetry-strategy.js')
  return aatbWithTelemetry(url, clientId)
}
