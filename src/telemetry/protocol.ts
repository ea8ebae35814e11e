// The telemetry wire protocol, shared by the client link and the server handler.
// No Node imports: this file runs in pages, service workers, Node and edge runtimes.
//
// One validator per message, used by BOTH sides: the server validates what clients
// send, the link validates what it is about to send and what the server answers.
// Validation is strict (types, ranges, lengths, no unknown fields) and never throws;
// it returns a typed value or a description of the first problem found.
import type { Aggregate } from '../core/types.js'

/** Protocol version carried in every message as `v`. */
export const PROTOCOL_VERSION = 1

/** Longest scope (lane key, e.g. an origin plus a policy name) accepted. */
export const MAX_SCOPE_LENGTH = 256
/** Longest client id accepted. */
export const MAX_CLIENT_ID_LENGTH = 128
/** Largest attempt / 429 count one report may carry (larger is a bug or an attack). */
export const MAX_REPORT_COUNT = 1_000_000
/** Largest backlog (queued requests) one report may carry. */
export const MAX_REPORT_BACKLOG = 1_000_000
/** Quota hints beyond this many units per window are nonsense for a request quota. */
export const MAX_QUOTA_UNITS = 1e9
/** Longest quota window accepted: 31 days. */
export const MAX_QUOTA_WINDOW_MS = 31 * 24 * 3600 * 1000
/** Largest rate a reply may announce, units per second. */
export const MAX_RATE_PER_SECOND = 1e9
/** Largest client count a reply may announce. */
export const MAX_ACTIVE_CLIENTS = 1e9

/** A quota the client saw announced (`RateLimit-Policy`: `q` units per `w`). */
export interface QuotaHint {
  quota: number
  windowMs: number
}

/** Client → server: what one client did on one scope since its previous report. */
export interface TelemetryReport {
  v: typeof PROTOCOL_VERSION
  scope: string
  clientId: string
  /** Attempts sent (successes and failures) since the previous report. */
  attempts: number
  /** Attempts answered 429 since the previous report. At most `attempts`. */
  throttled: number
  /** Quota the client saw announced by the API, when it saw one. */
  quota?: QuotaHint
  /** Requests waiting in the client's queue for this scope; weights the fair share. */
  backlog?: number
  /**
   * Optional, increasing per client: the server counts each (clientId, seq) at most once, so a
   * client may resend a report whose reply it never saw (a 503, a timeout) without it counting twice.
   */
  seq?: number
}

/** Server → client: the fleet's aggregate for one scope (maps 1:1 onto core `Aggregate`). */
export interface TelemetryReply {
  v: typeof PROTOCOL_VERSION
  scope: string
  activeClients: number
  totalAttempts: number
  throttledReports: number
  windowMs: number
  quotaPerSecond?: number
  fairSharePerSecond?: number
}

export type Validation<T> = { ok: true; value: T } | { ok: false; error: string }

type FieldCheck = (value: unknown, path: string) => string | undefined

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

// Visible ASCII without spaces: scopes are origins / policy names, client ids are
// opaque tokens. Excluding control characters keeps log lines and Redis keys sane.
const VISIBLE_ASCII = /^[\x21-\x7e]+$/

const text = (maxLength: number): FieldCheck => (value, path) => {
  if (typeof value !== 'string') return `${path} must be a string`
  if (value.length === 0 || value.length > maxLength) return `${path} must be 1..${maxLength} characters`
  if (!VISIBLE_ASCII.test(value)) return `${path} must be visible ASCII without spaces`
  return undefined
}

const integer = (max: number): FieldCheck => (value, path) => {
  if (typeof value !== 'number' || !Number.isInteger(value)) return `${path} must be an integer`
  if (value < 0 || value > max) return `${path} must be within 0..${max}`
  return undefined
}

const positive = (max: number): FieldCheck => (value, path) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) return `${path} must be a finite number`
  if (value <= 0 || value > max) return `${path} must be within (0, ${max}]`
  return undefined
}

const nonNegative = (max: number): FieldCheck => (value, path) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) return `${path} must be a finite number`
  if (value < 0 || value > max) return `${path} must be within 0..${max}`
  return undefined
}

const version: FieldCheck = (value, path) =>
  value === PROTOCOL_VERSION ? undefined : `${path} must be ${PROTOCOL_VERSION}`

interface Shape { required: Record<string, FieldCheck>; optional: Record<string, FieldCheck> }

// Entry lists per shape, computed once: validation runs once per report on the server's hot path.
const entryCache = new WeakMap<Shape, { required: [string, FieldCheck][]; optional: [string, FieldCheck][] }>()

function entriesOf(shape: Shape): { required: [string, FieldCheck][]; optional: [string, FieldCheck][] } {
  let entries = entryCache.get(shape)
  if (!entries) entryCache.set(shape, (entries = { required: Object.entries(shape.required), optional: Object.entries(shape.optional) }))
  return entries
}

function checkShape(input: unknown, shape: Shape, path: string): string | undefined {
  // `path` is the prefix of the fields ('quota.'); the object itself is named without the dot.
  if (!isPlainObject(input)) return `${path ? path.slice(0, -1) : 'message'} must be a JSON object`
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(shape.required, key) && !Object.hasOwn(shape.optional, key)) return `${path}${key} is not a known field`
  }
  const { required, optional } = entriesOf(shape)
  for (const [key, check] of required) {
    if (!Object.hasOwn(input, key)) return `${path}${key} is required`
    const problem = check(input[key], `${path}${key}`)
    if (problem) return problem
  }
  for (const [key, check] of optional) {
    if (!Object.hasOwn(input, key) || input[key] === undefined) continue
    const problem = check(input[key], `${path}${key}`)
    if (problem) return problem
  }
  return undefined
}

const quotaShape: Shape = {
  required: { quota: positive(MAX_QUOTA_UNITS), windowMs: positive(MAX_QUOTA_WINDOW_MS) },
  optional: {},
}

const reportShape: Shape = {
  required: {
    v: version,
    scope: text(MAX_SCOPE_LENGTH),
    clientId: text(MAX_CLIENT_ID_LENGTH),
    attempts: integer(MAX_REPORT_COUNT),
    throttled: integer(MAX_REPORT_COUNT),
  },
  optional: {
    quota: (value, path) => checkShape(value, quotaShape, `${path}.`),
    backlog: integer(MAX_REPORT_BACKLOG),
    seq: integer(Number.MAX_SAFE_INTEGER),
  },
}

const replyShape: Shape = {
  required: {
    v: version,
    scope: text(MAX_SCOPE_LENGTH),
    activeClients: integer(MAX_ACTIVE_CLIENTS),
    totalAttempts: nonNegative(Number.MAX_SAFE_INTEGER),
    throttledReports: nonNegative(Number.MAX_SAFE_INTEGER),
    windowMs: positive(MAX_QUOTA_WINDOW_MS),
  },
  optional: {
    quotaPerSecond: positive(MAX_RATE_PER_SECOND),
    fairSharePerSecond: positive(MAX_RATE_PER_SECOND),
  },
}

/** Validate a report (server: what arrived; client: what it is about to send). Never throws. */
export function validateReport(input: unknown): Validation<TelemetryReport> {
  const problem = checkShape(input, reportShape, '')
  if (problem) return { ok: false, error: problem }
  const report = input as unknown as TelemetryReport
  if (report.throttled > report.attempts) return { ok: false, error: 'throttled must not exceed attempts' }
  const value: TelemetryReport = {
    v: PROTOCOL_VERSION,
    scope: report.scope,
    clientId: report.clientId,
    attempts: report.attempts,
    throttled: report.throttled,
  }
  if (report.quota !== undefined) value.quota = { quota: report.quota.quota, windowMs: report.quota.windowMs }
  if (report.backlog !== undefined) value.backlog = report.backlog
  if (report.seq !== undefined) value.seq = report.seq
  return { ok: true, value }
}

/** Validate a reply (client: what the server answered; server tests: what it emits). Never throws. */
export function validateReply(input: unknown): Validation<TelemetryReply> {
  const problem = checkShape(input, replyShape, '')
  if (problem) return { ok: false, error: problem }
  const reply = input as unknown as TelemetryReply
  if (reply.activeClients < 1) return { ok: false, error: 'activeClients must be at least 1' }
  const value: TelemetryReply = {
    v: PROTOCOL_VERSION,
    scope: reply.scope,
    activeClients: reply.activeClients,
    totalAttempts: reply.totalAttempts,
    throttledReports: reply.throttledReports,
    windowMs: reply.windowMs,
  }
  if (reply.quotaPerSecond !== undefined) value.quotaPerSecond = reply.quotaPerSecond
  if (reply.fairSharePerSecond !== undefined) value.fairSharePerSecond = reply.fairSharePerSecond
  return { ok: true, value }
}

/** Parse JSON text and validate it as a report; bad JSON is a validation error, not a throw. */
export function parseReport(body: string): Validation<TelemetryReport> {
  let input: unknown
  try {
    input = JSON.parse(body)
  } catch {
    return { ok: false, error: 'body is not valid JSON' }
  }
  return validateReport(input)
}

/** Quota hint → units per second. */
export function quotaHintPerSecond(hint: QuotaHint): number {
  return hint.quota / (hint.windowMs / 1000)
}

/**
 * The rate a server may learn from a hint, or undefined when it is one no reply could carry:
 * each field is in range on its own, but a huge quota over a sub-millisecond window is an
 * infinite or absurd rate, and announcing it would make every reply on the scope invalid.
 */
export function learnableQuotaPerSecond(hint: QuotaHint): number | undefined {
  const rate = quotaHintPerSecond(hint)
  return rate > 0 && rate <= MAX_RATE_PER_SECOND ? rate : undefined
}

/** The reply as the core's `Aggregate` (what `Pacer.onAggregate` takes). */
export function replyToAggregate(reply: TelemetryReply): Aggregate {
  const aggregate: Aggregate = {
    activeClients: reply.activeClients,
    totalAttempts: reply.totalAttempts,
    throttledReports: reply.throttledReports,
    windowMs: reply.windowMs,
  }
  if (reply.quotaPerSecond !== undefined) aggregate.quotaPerSecond = reply.quotaPerSecond
  if (reply.fairSharePerSecond !== undefined) aggregate.fairSharePerSecond = reply.fairSharePerSecond
  return aggregate
}
