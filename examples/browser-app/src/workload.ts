// The load the widgets (and the end-to-end test) put on the shared quota: a bounded
// number of requests, a few at a time, stopping early at a wall-clock limit.

export interface HammerOptions {
  /** Upper bound on requests issued. */
  requests: number
  /** Requests in flight at once from this tab. */
  concurrency: number
  /** Stop issuing new requests after this long (ms); in-flight ones still settle. Default: no limit. */
  durationMs?: number
  /** URL of request i. */
  url(i: number): string
}

export interface HammerResult {
  /** Final status of every request, in completion order. */
  statuses: number[]
  /** Responses carrying the worker's `x-polite-fetch: paced` marker. */
  paced: number
  /** Requests that rejected (network error, give-up outside the worker), with the reason. */
  failures: string[]
  elapsedMs: number
}

export async function hammer(
  fetchFn: (url: string) => Promise<Response>,
  options: HammerOptions,
  onResponse: (status: number, index: number) => void = () => {},
): Promise<HammerResult> {
  const started = performance.now()
  const deadline = options.durationMs === undefined ? Infinity : started + options.durationMs
  const result: HammerResult = { statuses: [], paced: 0, failures: [], elapsedMs: 0 }
  let issued = 0
  const lane = async () => {
    while (issued < options.requests && performance.now() < deadline) {
      const i = issued++
      try {
        const response = await fetchFn(options.url(i))
        await response.arrayBuffer()
        result.statuses.push(response.status)
        if (response.headers.get('x-polite-fetch') === 'paced') result.paced++
        onResponse(response.status, i)
      } catch (error) {
        result.failures.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error))
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, lane))
  result.elapsedMs = performance.now() - started
  return result
}

export interface PulseOptions {
  /** Requests fired together at each pulse. */
  burst: number
  /** Time between pulses (ms). */
  everyMs: number
  /** Stop pulsing after this long (ms); requests already fired still settle. */
  durationMs: number
  url(i: number): string
}

/**
 * Bursty load under the quota on average but over its bucket at each burst (a page
 * that refreshes all its widgets at once): unpaced, each burst overflows into 429s;
 * paced at the learned rate, it is spread out and fits.
 */
export async function pulses(fetchFn: (url: string) => Promise<Response>, options: PulseOptions): Promise<HammerResult> {
  const started = performance.now()
  const result: HammerResult = { statuses: [], paced: 0, failures: [], elapsedMs: 0 }
  const pending: Promise<void>[] = []
  let issued = 0
  const one = async (i: number) => {
    try {
      const response = await fetchFn(options.url(i))
      await response.arrayBuffer()
      result.statuses.push(response.status)
      if (response.headers.get('x-polite-fetch') === 'paced') result.paced++
    } catch (error) {
      result.failures.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error))
    }
  }
  const pulseCount = Math.max(1, Math.ceil(options.durationMs / options.everyMs))
  for (let pulse = 0; pulse < pulseCount; pulse++) {
    for (let j = 0; j < options.burst; j++) pending.push(one(issued++))
    if (pulse < pulseCount - 1) await new Promise((resolve) => setTimeout(resolve, options.everyMs))
  }
  await Promise.all(pending)
  result.elapsedMs = performance.now() - started
  return result
}
