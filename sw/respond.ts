// Building the responses the worker hands to pages. Responses from the network are
// immutable, so marking one means rebuilding it around the same body stream.
import { PoliteFetchError } from '../src/client/errors.js'
import { PACED_HEADER, PACED_HEADER_VALUE } from '../src/client/fetch-job.js'
import { GIVE_UP_HEADER, giveUpFields, SHOULD_RETRY_HEADER } from '../src/client/give-up-header.js'

/**
 * Copy `response` with the paced marker, so page-side clients neither retry nor pace it
 * again. Opaque and redirect-filtered responses (status 0) cannot be rebuilt and pass
 * unmarked. Rebuilding drops `response.url`/`redirected`: the page sees its request URL.
 */
export function markPaced(response: Response): Response {
  if (response.status === 0 || response.type === 'opaque' || response.type === 'opaqueredirect') return response
  const headers = new Headers(response.headers)
  headers.set(PACED_HEADER, PACED_HEADER_VALUE)
  // A cross-origin page sees our synthetic response through the CORS filter: expose
  // what the worker itself could read (the browser already filtered it for us).
  if (response.type === 'cors') headers.set('access-control-expose-headers', exposeList(headers))
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
}

function exposeList(headers: Headers): string {
  const names: string[] = []
  headers.forEach((_value, name) => {
    if (name !== 'access-control-expose-headers') names.push(name)
  })
  return names.join(', ')
}

/** Why the worker answers instead of the server. */
export interface GiveUp {
  /** `deadline`, `budget`, `queue-full`, … as the limiter's error says. */
  reason: string
  message: string
  /** Epoch ms at which the server is expected to accept again, when known. */
  retryAt?: number
  attempts?: number
  scope?: string
}

const REASONS: Record<string, string> = {
  DeadlineError: 'deadline',
  RetryBudgetError: 'budget',
  RetryAfterTooLongError: 'retry-after-too-long',
  QueueFullError: 'queue-full',
  ClosedError: 'closed',
}

/**
 * The reasons the problem body names otherwise than the limiter: the give-up header takes the
 * limiter's, as on a `giveUp: 'response'` answer, so a page reads both headers alike.
 */
const LIMITER_REASONS: Record<string, string> = { budget: 'retry-budget' }

/** The limiter's typed give-up, or undefined for anything else (aborts, network errors). */
export function toGiveUp(error: unknown): GiveUp | undefined {
  if (!PoliteFetchError.is(error)) return undefined
  const giveUp: GiveUp = { reason: REASONS[error.name] ?? 'gave-up', message: error.message }
  if (error.retryAt !== undefined && Number.isFinite(error.retryAt)) giveUp.retryAt = error.retryAt
  if (error.attempts > 0) giveUp.attempts = error.attempts
  return giveUp
}

/**
 * A 503 (the request was not processed, so it is safe to retry for any method) with
 * `Retry-After` and an RFC 9457 problem body saying why the worker gave up.
 */
export function giveUpResponse(giveUp: GiveUp, request: Request, now: number, crossOrigin: boolean): Response {
  const retryAfterSeconds = giveUp.retryAt === undefined ? 1 : Math.max(1, Math.ceil((giveUp.retryAt - now) / 1000))
  const body: Record<string, unknown> = {
    type: `urn:polite-fetch:gave-up:${giveUp.reason}`,
    title: 'polite-fetch gave up before the server would accept this request',
    status: 503,
    detail: giveUp.message,
    instance: request.url,
    reason: giveUp.reason,
  }
  if (giveUp.retryAt !== undefined) body['retryAt'] = new Date(giveUp.retryAt).toISOString()
  if (giveUp.attempts !== undefined) body['attempts'] = giveUp.attempts
  if (giveUp.scope !== undefined) body['scope'] = giveUp.scope
  const headers = new Headers({
    'content-type': 'application/problem+json',
    'retry-after': String(retryAfterSeconds),
    'cache-control': 'no-store',
    [PACED_HEADER]: PACED_HEADER_VALUE,
  })
  // The same fields a `giveUp: 'response'` answer carries, so page-side SDKs read both alike.
  for (const [name, value] of giveUpFields(LIMITER_REASONS[giveUp.reason] ?? giveUp.reason, giveUp.retryAt)) headers.set(name, value)
  if (crossOrigin) headers.set('access-control-expose-headers', `retry-after, ${PACED_HEADER}, ${GIVE_UP_HEADER}, ${SHOULD_RETRY_HEADER}`)
  return new Response(JSON.stringify(body), { status: 503, statusText: 'Service Unavailable', headers })
}
