// The baseline: the same job with p-retry 7's exponential backoff, retrying on 429.
// p-retry's waits are wall-clock constants; against a time-compressed quota server
// they are compressed by the same factor, so the comparison is the one you would
// see at real speed.
import pRetry from 'p-retry'
import { runItems, type JobOptions, type RunSummary } from './job.js'

class TooManyRequests extends Error {}

export async function runWithPRetry(options: JobOptions & { timeScale: number }): Promise<RunSummary> {
  let attempts = 0
  let throttled = 0
  const { failed, durationMs } = await runItems(options, async (url) => {
    const response = await pRetry(
      async () => {
        attempts++
        const res = await fetch(url)
        await res.arrayBuffer()
        if (res.status === 429) {
          throttled++
          throw new TooManyRequests('429')
        }
        return res
      },
      // p-retry 7 defaults (retries 10, factor 2, no jitter), minTimeout 1 s at real speed.
      { retries: 10, factor: 2, minTimeout: 1000 / options.timeScale },
    )
    return response.status === 200
  })
  return { name: 'p-retry', items: options.items, failed, attempts, throttled, durationMs }
}
