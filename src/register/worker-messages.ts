// The page's copy of the worker protocol (sw/messages.ts is the worker's). The two
// cannot import each other (src never imports sw/, and sw/ does not reach into the
// page-only register/), so test/register/worker-messages.test.ts checks at type level
// and at run time that both sides speak the same messages.

export const PAGE_MESSAGE = {
  stats: 'polite-fetch:stats',
  subscribe: 'polite-fetch:subscribe',
  unsubscribe: 'polite-fetch:unsubscribe',
} as const

export const WORKER_MESSAGE = {
  statsReply: 'polite-fetch:stats-reply',
  event: 'polite-fetch:event',
} as const

export type PageMessage =
  | { type: typeof PAGE_MESSAGE.stats; id?: number }
  | { type: typeof PAGE_MESSAGE.subscribe; events: string[] }
  | { type: typeof PAGE_MESSAGE.unsubscribe; events?: string[] }

/** Which worker instance answered: a different `instanceId` means the browser restarted it. */
export interface WorkerInfo {
  instanceId: string
  /** Epoch ms at which this instance started. */
  startedAt: number
}

export type WorkerMessage =
  | { type: typeof WORKER_MESSAGE.statsReply; id?: number; stats: unknown; worker: WorkerInfo }
  | { type: typeof WORKER_MESSAGE.event; event: string; detail: unknown; at: number }

/** A limiter event forwarded by the worker, or undefined for anything else on the channel. */
export function readWorkerEvent(data: unknown): { event: string; detail: unknown; at: number } | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const message = data as Record<string, unknown>
  if (message['type'] !== WORKER_MESSAGE.event || typeof message['event'] !== 'string') return undefined
  const at = typeof message['at'] === 'number' ? message['at'] : 0
  return { event: message['event'], detail: message['detail'], at }
}

/** A stats reply, or undefined when the data is not one (an old worker, garbage). */
export function readStatsReply(data: unknown): { stats: unknown; worker: WorkerInfo } | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const message = data as Record<string, unknown>
  if (message['type'] !== WORKER_MESSAGE.statsReply) return undefined
  const worker = message['worker'] as Record<string, unknown> | undefined
  if (typeof worker?.['instanceId'] !== 'string' || typeof worker['startedAt'] !== 'number') return undefined
  return { stats: message['stats'], worker: { instanceId: worker['instanceId'], startedAt: worker['startedAt'] } }
}
