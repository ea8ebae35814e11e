// The job both variants run: fetch `items` resources from one API, 16 at a time.
import PQueue from 'p-queue'
import { progress } from './progress.js'

export interface RunSummary {
  /** `polite-fetch` or `p-retry`. */
  name: string
  items: number
  /** Items whose final answer was not a 200 (gave up). */
  failed: number
  /** HTTP requests sent, retries included. */
  attempts: number
  /** 429 answers among them. */
  throttled: number
  durationMs: number
}

export interface JobOptions {
  url: string
  /** First item index (workers split the range). */
  first: number
  items: number
  concurrency: number
  label: string
  quiet: boolean
}

/** Run `fetchItem` over every item with p-queue; resolves with how many failed and how long it took. */
export async function runItems(
  options: JobOptions,
  fetchItem: (url: string) => Promise<boolean>,
): Promise<{ failed: number; durationMs: number }> {
  const queue = new PQueue({ concurrency: options.concurrency })
  const bar = options.quiet ? undefined : progress(options.label, options.items)
  let failed = 0
  const start = performance.now()
  for (let i = 0; i < options.items; i++) {
    const url = `${options.url}/items/${options.first + i}`
    void queue.add(async () => {
      const ok = await fetchItem(url).catch(() => false)
      if (!ok) failed++
      bar?.tick()
    })
  }
  await queue.onIdle()
  bar?.done()
  return { failed, durationMs: performance.now() - start }
}
