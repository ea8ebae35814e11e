// Runs a shared-quota workload for real: N independent clients, each its own
// `createClient` (sequential, one request in flight, unlimited retries, as in the
// paper's harness), against the local HTTP quota server on 127.0.0.1, in
// time-compressed wall time. What it measures is the shipped client, not a model.
import { setMaxListeners } from 'node:events'
import { createClient } from '../../client/create-client.js'
import type { Strategy } from '../../core/types.js'
import { startQuotaServer } from '../quota-server.js'
import type { ResultRow } from '../result-row.js'
import type { Scenario } from '../scenarios.js'
import type { Feedback, QuotaConfig, ServerKind } from '../types.js'
import { generateWorkload, type Workload } from '../workload.js'
import { scaledClock } from './scaled-clock.js'

export interface LiveRunOptions {
  scenario: Scenario
  seed: number
  /** Strategy name for the row, and the strategy itself (a fresh pacer per client). */
  strategyName: string
  strategy: Strategy
  feedback: Feedback
  /** Model time runs this many times faster than wall time. @default 20 */
  timeScale?: number
  kind?: ServerKind
  quota?: Partial<QuotaConfig>
  /** Told after every completed request: how many of the workload's requests are done. */
  onProgress?: (done: number, total: number) => void
  /** The arrivals, when not `generateWorkload(scenario, seed)`. */
  workload?: Workload
  /**
   * Wall-clock bound on the run: calls still unsettled then are aborted and the run
   * reports `completed < requests` (a bench reads that as a miss). A client that never
   * gives up on a slow lane would otherwise keep the run going for as long as it paces.
   * @default Infinity
   */
  maxWallMs?: number
}

export interface LiveRow extends ResultRow {
  seed: number
  /** Wall-clock duration of the run, ms. */
  wallMs: number
  /** Requests that settled; below `requests` when `maxWallMs` cut the run short. */
  completed: number
}

export async function runLiveWorkload(options: LiveRunOptions): Promise<LiveRow> {
  const timeScale = options.timeScale ?? 20
  const workload = options.workload ?? generateWorkload(options.scenario, options.seed)
  const clock = scaledClock(timeScale)
  const server = await startQuotaServer({
    clock: clock.now,
    feedback: options.feedback,
    ...(options.kind === undefined ? {} : { kind: options.kind }),
    ...(options.quota === undefined ? {} : { quota: options.quota }),
  })
  const origin = clock.now()
  let firstAttemptAt = Infinity
  let lastSuccessAt = -Infinity
  let attempts = 0
  let throttled = 0
  let completed = 0
  const cutOff = new AbortController()
  // Every client follows it through a signal of its own (below).
  setMaxListeners(Infinity, cutOff.signal)

  const runClient = async (arrivalsMs: number[], id: number): Promise<void> => {
    const client = createClient({
      strategy: options.strategy,
      clock,
      maxInFlight: 1,
      // The paper's clients never give up: unlimited retries, no deadline.
      deadlineMs: Infinity,
      maxRetryAfterMs: Infinity,
      idleMs: 3_600_000,
    })
    client.on('attempt', () => {
      attempts += 1
      firstAttemptAt = Math.min(firstAttemptAt, clock.now())
    })
    client.on('throttled', () => {
      throttled += 1
    })
    // Node's fetch lets go of its listener on a request's signal only when the request is garbage
    // collected (and lowers the signal's limit to 1,500 past 10 listeners): the whole fleet's
    // attempts on one signal passed that between collections, and the demo printed Node's
    // "possible EventTarget memory leak" warnings. A signal per client holds only its own.
    const stop = new AbortController()
    const onCutOff = (): void => stop.abort(cutOff.signal.reason)
    cutOff.signal.addEventListener('abort', onCutOff, { once: true })
    try {
      for (const arrivalMs of arrivalsMs) {
        const wait = origin + arrivalMs - clock.now()
        if (wait > 0) await clock.sleep(wait, stop.signal)
        const response = await client.fetch(`${server.url}/api/items?client=${id}`, { signal: stop.signal })
        await response.arrayBuffer()
        if (response.ok) lastSuccessAt = Math.max(lastSuccessAt, clock.now())
        completed += 1
        options.onProgress?.(completed, workload.requests)
      }
    } catch (error) {
      if (!cutOff.signal.aborted) throw error
    } finally {
      cutOff.signal.removeEventListener('abort', onCutOff)
      await client.close()
    }
  }

  const wallStart = performance.now()
  const maxWallMs = options.maxWallMs ?? Infinity
  const timer = Number.isFinite(maxWallMs) ? setTimeout(() => cutOff.abort(), maxWallMs) : undefined
  try {
    await Promise.all(workload.clients.map((c) => runClient(c.arrivalsMs, c.id)))
  } finally {
    clearTimeout(timer)
    await server.close()
  }
  return {
    strategy: options.strategyName,
    feedback: options.feedback,
    clients: workload.clients.length,
    requests: workload.requests,
    attempts,
    throttled,
    completionMs: Math.round(lastSuccessAt - firstAttemptAt),
    seed: options.seed,
    wallMs: Math.round(performance.now() - wallStart),
    completed,
  }
}
