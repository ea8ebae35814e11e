// The message protocol between the tabs of an origin that share one lane per scope without a
// service worker (src/tabs/). Leader grants, follower sends: the follower performs every
// attempt itself and tells the leader only what the response said (its Signal), so request
// and response bodies never cross the channel. Plain structured-clone data; every message
// carries `v` (the protocol version) and a `polite-fetch:tab:*` type, and anything else on
// the channel (another version, another library, garbage) is ignored.

export const TAB_PROTOCOL_VERSION = 1

/**
 * The sender id of the polite-fetch service worker when it leads the lanes of a page it does
 * not control (after a hard reload): such a page posts to the worker and hears back on
 * `navigator.serviceWorker`, with the same messages as between tabs.
 */
export const SERVICE_WORKER_TAB_ID = 'service-worker'

export const TAB_MESSAGE = {
  /** A tab asks who leads a scope (the leader answers `hello`). */
  who: 'polite-fetch:tab:who',
  /** The leader of a scope announces itself (on election and to `who`). */
  hello: 'polite-fetch:tab:hello',
  /** A tab stops leading (`scope`) or leaves (no scope): followers resubmit, the leader drops its calls. */
  bye: 'polite-fetch:tab:bye',
  /** BroadcastChannel fallback only: a tab bids for a scope that has no leader. */
  claim: 'polite-fetch:tab:claim',
  /** Follower → leader: run this call in your lane. */
  call: 'polite-fetch:tab:call',
  /** Follower → leader: the caller aborted; drop the call. */
  cancel: 'polite-fetch:tab:cancel',
  /** Follower → leader: what attempt n's response said. */
  outcome: 'polite-fetch:tab:outcome',
  /** Follower → leader: attempt n failed without a response. */
  failed: 'polite-fetch:tab:failed',
  /** Leader → follower: send attempt n now. */
  grant: 'polite-fetch:tab:grant',
  /** Leader → follower: abort attempt n (its per-attempt timeout fired). */
  abortAttempt: 'polite-fetch:tab:abort-attempt',
  /** Leader → follower: attempt n is being retried; release its response. */
  discard: 'polite-fetch:tab:discard',
  /** Leader → follower: the call ends with attempt n's response (or its transport error). */
  settle: 'polite-fetch:tab:settle',
  /** Leader → follower: the call ends with the limiter's typed error. */
  reject: 'polite-fetch:tab:reject',
  /** Leader → follower: later calls of this route go to the scope `policy` names. */
  learnRoute: 'polite-fetch:tab:learn-route',
  /** Follower → leader: forward these limiter events to me. */
  subscribe: 'polite-fetch:tab:subscribe',
  /** Leader → followers: a limiter event. */
  event: 'polite-fetch:tab:event',
  /** Any tab → leader: the lane's stats, please. */
  stats: 'polite-fetch:tab:stats',
  statsReply: 'polite-fetch:tab:stats-reply',
} as const

/** What a follower tells the leader about one call (no body, no headers). */
export interface CallSpec {
  scope: string
  cost: number
  priority?: number
  /** Epoch ms at which the call's deadline passes (tabs of one browser share one clock). */
  deadlineAt: number
  /** Retries left (Infinity allowed). */
  retryBudget: number
  retryErrors: boolean
  label?: string
  route?: string
  /** Attempts already sent under an earlier leader (a resubmission after a handover). */
  attemptsDone: number
}

/** What one attempt's response said: the core's Signal, as plain data. */
export interface SignalData {
  kind: 'ok' | 'throttled' | 'overloaded' | 'error'
  status: number
  retryAt?: number
  remaining?: number
  resetAt?: number
  limit?: number
  policy?: string
  /** Every policy the response announced (RateLimit-Policy): the leader's pacer reads the window from it. */
  policies?: PolicyData[]
  /** The server's `x-should-retry`, when it said. */
  shouldRetry?: boolean
}

/** One announced quota policy, as plain data (the core's QuotaPolicy). */
export interface PolicyData {
  name: string
  quota: number
  windowMs?: number
  unit?: string
}

/** More policies than one response plausibly announces are not read (a bound on hostile input). */
const MAX_POLICIES = 16

/** A limiter error as data; the follower rebuilds the typed error from `name`. */
export interface ErrorData {
  name: string
  message: string
  retryAt?: number
  attempts?: number
  request?: string
}

interface Envelope {
  v: typeof TAB_PROTOCOL_VERSION
  /** Sending tab. */
  from: string
  /** Addressed tab; absent for broadcasts. */
  to?: string
}

export type TabMessage = Envelope &
  (
    | { type: typeof TAB_MESSAGE.who; scope: string }
    | { type: typeof TAB_MESSAGE.hello; scope: string }
    | { type: typeof TAB_MESSAGE.bye; scope?: string }
    | { type: typeof TAB_MESSAGE.claim; scope: string }
    | { type: typeof TAB_MESSAGE.call; id: number; call: CallSpec }
    | { type: typeof TAB_MESSAGE.cancel; id: number }
    | {
        type: typeof TAB_MESSAGE.outcome
        id: number
        attempt: number
        signal: SignalData
        retryable: boolean
        neutral: boolean
        reason?: string
      }
    | { type: typeof TAB_MESSAGE.failed; id: number; attempt: number; error: ErrorData; finalReason?: string }
    | { type: typeof TAB_MESSAGE.grant; id: number; attempt: number }
    | { type: typeof TAB_MESSAGE.abortAttempt; id: number; attempt: number; error: ErrorData }
    | { type: typeof TAB_MESSAGE.discard; id: number; attempt: number }
    | { type: typeof TAB_MESSAGE.settle; id: number; attempt: number }
    | { type: typeof TAB_MESSAGE.reject; id: number; error: ErrorData }
    | { type: typeof TAB_MESSAGE.learnRoute; id: number; policy: string }
    | { type: typeof TAB_MESSAGE.subscribe; events: string[] }
    | { type: typeof TAB_MESSAGE.event; event: string; detail: unknown }
    | { type: typeof TAB_MESSAGE.stats; scope: string; id: number }
    | { type: typeof TAB_MESSAGE.statsReply; scope: string; id: number; stats: unknown }
  )

export type TabMessageType = TabMessage['type']

/** A message without its envelope, as the sender builds it. */
export type TabPayload = TabMessage extends infer M ? (M extends TabMessage ? Omit<M, 'v' | 'from' | 'to'> : never) : never

const SIGNAL_KINDS = new Set(['ok', 'throttled', 'overloaded', 'error'])

type Fields = Record<string, unknown>
const isString = (value: unknown): value is string => typeof value === 'string'
const isId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
const isAttempt = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1
/** A number that may be Infinity (retry budget, deadline) but not NaN. */
const isAmount = (value: unknown): value is number => typeof value === 'number' && !Number.isNaN(value) && value >= 0
const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)
const isRecord = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value)

function readSignalData(value: unknown): SignalData | undefined {
  if (!isRecord(value) || !SIGNAL_KINDS.has(value['kind'] as string) || !isFiniteNumber(value['status'])) return undefined
  const signal: SignalData = { kind: value['kind'] as SignalData['kind'], status: value['status'] }
  for (const key of ['retryAt', 'remaining', 'resetAt', 'limit'] as const) {
    const field = value[key]
    if (isFiniteNumber(field)) signal[key] = field
  }
  if (isString(value['policy'])) signal.policy = value['policy']
  if (typeof value['shouldRetry'] === 'boolean') signal.shouldRetry = value['shouldRetry']
  const policies = readPolicies(value['policies'])
  if (policies !== undefined) signal.policies = policies
  return signal
}

/** The announced policies, or undefined when the field is absent or anything in it is malformed. */
function readPolicies(value: unknown): PolicyData[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_POLICIES) return undefined
  const policies: PolicyData[] = []
  for (const item of value) {
    if (!isRecord(item) || !isString(item['name']) || !isFiniteNumber(item['quota']) || item['quota'] < 0) return undefined
    const policy: PolicyData = { name: item['name'], quota: item['quota'] }
    if (item['windowMs'] !== undefined) {
      if (!isFiniteNumber(item['windowMs']) || item['windowMs'] <= 0) return undefined
      policy.windowMs = item['windowMs']
    }
    if (item['unit'] !== undefined) {
      if (!isString(item['unit'])) return undefined
      policy.unit = item['unit']
    }
    policies.push(policy)
  }
  return policies
}

function readErrorData(value: unknown): ErrorData | undefined {
  if (!isRecord(value) || !isString(value['name']) || !isString(value['message'])) return undefined
  const error: ErrorData = { name: value['name'], message: value['message'] }
  if (isFiniteNumber(value['retryAt'])) error.retryAt = value['retryAt']
  if (isId(value['attempts'])) error.attempts = value['attempts']
  if (isString(value['request'])) error.request = value['request']
  return error
}

function readCallSpec(value: unknown): CallSpec | undefined {
  if (!isRecord(value)) return undefined
  const { scope, cost, deadlineAt, retryBudget, retryErrors, attemptsDone } = value
  if (!isString(scope) || !isAmount(cost) || !Number.isFinite(cost) || !isAmount(deadlineAt)) return undefined
  if (!isAmount(retryBudget) || typeof retryErrors !== 'boolean' || !isId(attemptsDone)) return undefined
  const spec: CallSpec = { scope, cost, deadlineAt, retryBudget, retryErrors, attemptsDone }
  if (isFiniteNumber(value['priority'])) spec.priority = value['priority']
  if (isString(value['label'])) spec.label = value['label']
  if (isString(value['route'])) spec.route = value['route']
  return spec
}

/** The body of a message of `type`, validated; undefined when a field is missing or of the wrong kind. */
function readBody(type: unknown, m: Fields): TabPayload | undefined {
  switch (type) {
    case TAB_MESSAGE.who:
    case TAB_MESSAGE.hello:
    case TAB_MESSAGE.claim:
      return isString(m['scope']) ? { type, scope: m['scope'] } : undefined
    case TAB_MESSAGE.bye:
      if (m['scope'] === undefined) return { type }
      return isString(m['scope']) ? { type, scope: m['scope'] } : undefined
    case TAB_MESSAGE.call: {
      const call = readCallSpec(m['call'])
      return isId(m['id']) && call ? { type, id: m['id'], call } : undefined
    }
    case TAB_MESSAGE.cancel:
      return isId(m['id']) ? { type, id: m['id'] } : undefined
    case TAB_MESSAGE.outcome: {
      const signal = readSignalData(m['signal'])
      if (!isId(m['id']) || !isAttempt(m['attempt']) || !signal) return undefined
      if (typeof m['retryable'] !== 'boolean' || typeof m['neutral'] !== 'boolean') return undefined
      const body: TabPayload = { type, id: m['id'], attempt: m['attempt'], signal, retryable: m['retryable'], neutral: m['neutral'] }
      if (isString(m['reason'])) body.reason = m['reason']
      return body
    }
    case TAB_MESSAGE.failed: {
      const error = readErrorData(m['error'])
      if (!isId(m['id']) || !isAttempt(m['attempt']) || !error) return undefined
      const body: TabPayload = { type, id: m['id'], attempt: m['attempt'], error }
      if (isString(m['finalReason'])) body.finalReason = m['finalReason']
      return body
    }
    case TAB_MESSAGE.grant:
    case TAB_MESSAGE.discard:
    case TAB_MESSAGE.settle:
      return isId(m['id']) && isAttempt(m['attempt']) ? { type, id: m['id'], attempt: m['attempt'] } : undefined
    case TAB_MESSAGE.abortAttempt: {
      const error = readErrorData(m['error'])
      return isId(m['id']) && isAttempt(m['attempt']) && error ? { type, id: m['id'], attempt: m['attempt'], error } : undefined
    }
    case TAB_MESSAGE.reject: {
      const error = readErrorData(m['error'])
      return isId(m['id']) && error ? { type, id: m['id'], error } : undefined
    }
    case TAB_MESSAGE.learnRoute:
      return isId(m['id']) && isString(m['policy']) ? { type, id: m['id'], policy: m['policy'] } : undefined
    case TAB_MESSAGE.subscribe:
      return Array.isArray(m['events']) && m['events'].every(isString) ? { type, events: m['events'] } : undefined
    case TAB_MESSAGE.event:
      return isString(m['event']) ? { type, event: m['event'], detail: m['detail'] } : undefined
    case TAB_MESSAGE.stats:
      return isString(m['scope']) && isId(m['id']) ? { type, scope: m['scope'], id: m['id'] } : undefined
    case TAB_MESSAGE.statsReply:
      return isString(m['scope']) && isId(m['id']) ? { type, scope: m['scope'], id: m['id'], stats: m['stats'] } : undefined
    default:
      return undefined
  }
}

/**
 * Validate a message from the channel: this protocol's version, a known type and every field
 * of the right kind. Anything else is `undefined` and must be ignored.
 */
export function readTabMessage(data: unknown): TabMessage | undefined {
  if (!isRecord(data) || data['v'] !== TAB_PROTOCOL_VERSION || !isString(data['from']) || data['from'] === '') return undefined
  if (data['to'] !== undefined && !isString(data['to'])) return undefined
  const body = readBody(data['type'], data)
  if (!body) return undefined
  const message = { ...body, v: TAB_PROTOCOL_VERSION, from: data['from'] } as TabMessage
  if (isString(data['to'])) message.to = data['to']
  return message
}

/** Wrap a payload in this protocol's envelope. */
export function tabMessage(payload: TabPayload, from: string, to?: string): TabMessage {
  const message = { ...payload, v: TAB_PROTOCOL_VERSION, from } as TabMessage
  if (to !== undefined) message.to = to
  return message
}

/** The BroadcastChannel (and Web Lock prefix) of a sharing group; the version is part of it. */
export function tabChannelName(group: string): string {
  return `polite-fetch:tabs:v${TAB_PROTOCOL_VERSION}:${group}`
}
