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
  /** The resolution `retryAt` was given in, when finer than whole seconds (retry-after-ms). */
  retryResolutionMs?: number
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
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean'
const isId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
const isAttempt = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1
/** A number that may be Infinity (retry budget, deadline) but not NaN. */
const isAmount = (value: unknown): value is number => typeof value === 'number' && !Number.isNaN(value) && value >= 0
const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)
const isRecord = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value)

// Every message and nested record is read through one schema: per field, a reader that returns
// the value to keep, undefined to leave the field out, or INVALID to refuse the whole record.
const INVALID = Symbol('invalid')
type Field = (value: unknown) => unknown
type Schema = Record<string, Field>
/** Required: a record without it, or with it malformed, is refused. */
const must = (test: (value: unknown) => boolean): Field => (value) => (test(value) ? value : INVALID)
/** Optional and lenient: a malformed value is dropped, the record kept. */
const may = (test: (value: unknown) => boolean): Field => (value) => (test(value) ? value : undefined)
/** Optional and strict: absent is fine, malformed refuses the record. */
const ifPresent = (test: (value: unknown) => boolean): Field => (value) => (value === undefined || test(value) ? value : INVALID)
/** Opaque data (an event's detail, stats): passed on as is. */
const opaque: Field = (value) => value

/** Only the schema's fields are copied, so nothing else a sender put in crosses into our objects. */
function readRecord(schema: Schema, value: unknown): Fields | typeof INVALID {
  if (!isRecord(value)) return INVALID
  const record: Fields = {}
  for (const key in schema) {
    const field = (schema[key] as Field)(value[key])
    if (field === INVALID) return INVALID
    if (field !== undefined) record[key] = field
  }
  return record
}
const nested = (schema: Schema): Field => (value) => readRecord(schema, value)

const POLICY: Schema = {
  name: must(isString),
  quota: must((value) => isFiniteNumber(value) && value >= 0),
  windowMs: ifPresent((value) => isFiniteNumber(value) && value > 0),
  unit: ifPresent(isString),
}

/** The announced policies: dropped when absent, empty, too many, or anything in them is malformed. */
const policies: Field = (value) => {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_POLICIES) return undefined
  const read = value.map((item) => readRecord(POLICY, item))
  return read.includes(INVALID) ? undefined : read
}

const SIGNAL: Schema = {
  kind: must((value) => SIGNAL_KINDS.has(value as string)),
  status: must(isFiniteNumber),
  retryAt: may(isFiniteNumber),
  retryResolutionMs: may(isFiniteNumber),
  remaining: may(isFiniteNumber),
  resetAt: may(isFiniteNumber),
  limit: may(isFiniteNumber),
  policy: may(isString),
  shouldRetry: may(isBoolean),
  policies,
}

const ERROR: Schema = {
  name: must(isString),
  message: must(isString),
  retryAt: may(isFiniteNumber),
  attempts: may(isId),
  request: may(isString),
}

const CALL: Schema = {
  scope: must(isString),
  cost: must((value) => isAmount(value) && Number.isFinite(value)),
  deadlineAt: must(isAmount),
  retryBudget: must(isAmount),
  retryErrors: must(isBoolean),
  attemptsDone: must(isId),
  priority: may(isFiniteNumber),
  label: may(isString),
  route: may(isString),
}

const id = must(isId)
const attempt = must(isAttempt)
const scope = must(isString)
const error = nested(ERROR)

/** The body of each message type (beside `type`); see TabMessage. */
const BODIES: Record<string, Schema> = {
  [TAB_MESSAGE.who]: { scope },
  [TAB_MESSAGE.hello]: { scope },
  [TAB_MESSAGE.claim]: { scope },
  [TAB_MESSAGE.bye]: { scope: ifPresent(isString) },
  [TAB_MESSAGE.call]: { id, call: nested(CALL) },
  [TAB_MESSAGE.cancel]: { id },
  [TAB_MESSAGE.outcome]: { id, attempt, signal: nested(SIGNAL), retryable: must(isBoolean), neutral: must(isBoolean), reason: may(isString) },
  [TAB_MESSAGE.failed]: { id, attempt, error, finalReason: may(isString) },
  [TAB_MESSAGE.grant]: { id, attempt },
  [TAB_MESSAGE.discard]: { id, attempt },
  [TAB_MESSAGE.settle]: { id, attempt },
  [TAB_MESSAGE.abortAttempt]: { id, attempt, error },
  [TAB_MESSAGE.reject]: { id, error },
  [TAB_MESSAGE.learnRoute]: { id, policy: must(isString) },
  [TAB_MESSAGE.subscribe]: { events: must((value) => Array.isArray(value) && value.every(isString)) },
  [TAB_MESSAGE.event]: { event: must(isString), detail: opaque },
  [TAB_MESSAGE.stats]: { scope, id },
  [TAB_MESSAGE.statsReply]: { scope, id, stats: opaque },
}

/**
 * Validate a message from the channel: this protocol's version, a known type and every field
 * of the right kind. Anything else is `undefined` and must be ignored.
 */
export function readTabMessage(data: unknown): TabMessage | undefined {
  if (!isRecord(data) || data['v'] !== TAB_PROTOCOL_VERSION || !isString(data['from']) || data['from'] === '') return undefined
  if (data['to'] !== undefined && !isString(data['to'])) return undefined
  const type = data['type']
  const schema = typeof type === 'string' && Object.hasOwn(BODIES, type) ? BODIES[type] : undefined
  const body = schema === undefined ? INVALID : readRecord(schema, data)
  if (body === INVALID) return undefined
  const message = { type, ...body, v: TAB_PROTOCOL_VERSION, from: data['from'] } as TabMessage
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
