// The message protocol between pages and the polite-fetch service worker, in one place
// for both sides (sw/ and src/register/ import it; neither imports the other). Plain
// structured-clone data only; every message is tagged `polite-fetch:*` so a page's
// other worker messages are ignored.

export const PAGE_MESSAGE = {
  /** Ask for `stats()`; the answer goes to `event.ports[0]` (or back to the sender). */
  stats: 'polite-fetch:stats',
  /** Deliver the named limiter events to the sending page (survives worker restarts). */
  subscribe: 'polite-fetch:subscribe',
  unsubscribe: 'polite-fetch:unsubscribe',
  /** The page aborted the call its request named in CALL_HEADER: the worker ends it. */
  abort: 'polite-fetch:abort',
} as const

/**
 * Request header naming a page's call (`polite.fetch` with a signal), so the page's abort can
 * reach the worker: Chromium never aborts a FetchEvent's `request.signal`, and a call the page
 * gave up on stayed queued in the worker and was sent later. The worker removes the header
 * before the request goes on; a page sets it only for a worker that says it does (`features`).
 */
export const CALL_HEADER = 'x-polite-fetch-call'

/** What a worker's stats reply lists in `features`. */
export const WORKER_FEATURE = {
  /** It reads CALL_HEADER, removes it, and ends the call on the page's `abort`. */
  abort: 'abort',
  /** It reads CALL_OPTIONS_HEADER (call-options.ts), removes it, and applies the options to the call. */
  callOptions: 'call-options',
} as const

/** A call id's longest form (the page sends a UUID). */
const MAX_CALL_ID_LENGTH = 64

export const WORKER_MESSAGE = {
  statsReply: 'polite-fetch:stats-reply',
  event: 'polite-fetch:event',
} as const

export type PageMessage =
  | { type: typeof PAGE_MESSAGE.stats; id?: number }
  | { type: typeof PAGE_MESSAGE.subscribe; events: string[] }
  | { type: typeof PAGE_MESSAGE.unsubscribe; events?: string[] }
  | { type: typeof PAGE_MESSAGE.abort; call: string }

/** Which worker instance answered: a different `instanceId` means the browser restarted it. */
export interface WorkerInfo {
  instanceId: string
  /** Epoch ms at which this instance started. */
  startedAt: number
}

export type WorkerMessage =
  | { type: typeof WORKER_MESSAGE.statsReply; id?: number; stats: unknown; worker: WorkerInfo; features?: string[] }
  | { type: typeof WORKER_MESSAGE.event; event: string; detail: unknown; at: number }

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string')

/** Validate a page's message; anything else (another library's message, garbage) is `undefined`. */
export function readPageMessage(data: unknown): PageMessage | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const message = data as Record<string, unknown>
  switch (message['type']) {
    case PAGE_MESSAGE.stats: {
      const id = message['id']
      return typeof id === 'number' ? { type: PAGE_MESSAGE.stats, id } : { type: PAGE_MESSAGE.stats }
    }
    case PAGE_MESSAGE.subscribe:
      return isStringArray(message['events']) ? { type: PAGE_MESSAGE.subscribe, events: message['events'] } : undefined
    case PAGE_MESSAGE.unsubscribe: {
      const events = message['events']
      if (events === undefined) return { type: PAGE_MESSAGE.unsubscribe }
      return isStringArray(events) ? { type: PAGE_MESSAGE.unsubscribe, events } : undefined
    }
    case PAGE_MESSAGE.abort: {
      const call = message['call']
      return typeof call === 'string' && call.length > 0 && call.length <= MAX_CALL_ID_LENGTH ? { type: PAGE_MESSAGE.abort, call } : undefined
    }
    default:
      return undefined
  }
}

/**
 * A copy of `value` that `postMessage` can always clone: functions and symbols are
 * dropped, errors become `{ name, message }`, Requests and Responses their method/URL/
 * status, and depth is bounded, so a stray object in an event never breaks delivery.
 */
export function toCloneable(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value
  const type = typeof value
  if (type === 'number' || type === 'string' || type === 'boolean') return value
  if (type === 'bigint') return String(value)
  if (type !== 'object' || depth > 6) return undefined
  if (value instanceof Error) return { name: value.name, message: value.message }
  if (typeof Request !== 'undefined' && value instanceof Request) return { method: value.method, url: value.url }
  if (typeof Response !== 'undefined' && value instanceof Response) return { status: value.status, url: value.url }
  if (value instanceof Date) return value.getTime()
  if (Array.isArray(value)) return value.map((item) => toCloneable(item, depth + 1))
  if (value instanceof Map) return toCloneable(Object.fromEntries(value), depth)
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const copy = toCloneable(item, depth + 1)
    if (copy !== undefined) out[key] = copy
  }
  return out
}

/** A limiter event forwarded by the worker, or undefined for anything else on the channel. */
export function readWorkerEvent(data: unknown): { event: string; detail: unknown; at: number } | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const message = data as Record<string, unknown>
  if (message['type'] !== WORKER_MESSAGE.event || typeof message['event'] !== 'string') return undefined
  const at = typeof message['at'] === 'number' ? message['at'] : 0
  return { event: message['event'], detail: message['detail'], at }
}

/** A stats reply, or undefined when the data is not one (an old worker, garbage). */
export function readStatsReply(data: unknown): { stats: unknown; worker: WorkerInfo; features: string[] } | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const message = data as Record<string, unknown>
  if (message['type'] !== WORKER_MESSAGE.statsReply) return undefined
  const worker = message['worker'] as Record<string, unknown> | undefined
  if (typeof worker?.['instanceId'] !== 'string' || typeof worker['startedAt'] !== 'number') return undefined
  // An older worker lists none.
  const features = isStringArray(message['features']) ? message['features'] : []
  return { stats: message['stats'], worker: { instanceId: worker['instanceId'], startedAt: worker['startedAt'] }, features }
}
