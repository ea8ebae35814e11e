// Seams of the simulator and of the local quota server. Server models are pure:
// they take `now` (ms, any origin) and mutate only their own state, so the same
// model answers in virtual time (simulator) and in wall-clock time (quota server).

/** How a server tells clients about its quota. Named the same everywhere (CLI, JSON rows, quota server). */
export type Feedback = 'status-only' | 'retry-after' | 'retry-after-ms' | 'ratelimit' | 'x-ratelimit'

export const FEEDBACK_MODES: readonly Feedback[] = ['status-only', 'retry-after', 'retry-after-ms', 'ratelimit', 'x-ratelimit']

/** The mode a feedback mode is judged as: a Retry-After in milliseconds by the lines of one in seconds. */
export function judgedFeedback(feedback: Feedback): Feedback {
  return feedback === 'retry-after-ms' ? 'retry-after' : feedback
}

/** The outcome of offering one request to a server model. */
export interface Admission {
  admitted: boolean
  /** When rejected: ms from `now` until a request of the same cost would be admitted (if nothing else arrives). */
  retryAfterMs?: number
  /** Units left right after this decision. */
  remaining: number
  /** The quota limit (bucket capacity, window quota). */
  limit: number
  /** ms from `now` until the quota is fully replenished (or the window resets). */
  resetMs: number
  /** Window the limit applies to, in ms (for RateLimit-Policy `w`). */
  windowMs: number
  /** Policy name (`global`, or the endpoint's own limit name). */
  policy: string
}

export interface ServerModel {
  /** e.g. `token-bucket-continuous`, `token-bucket-stepped`, `leaky-bucket`, `sliding-window-counter`. */
  readonly name: string
  /** Offer a request of `cost` units at `now`; consumes quota when admitted. */
  admit(now: number, cost: number): Admission
  /** Earliest time >= now at which a request of `cost` would be admitted, without changing state. */
  nextAdmitAt(now: number, cost: number): number
}

/** Server models by name; the name is what result rows carry in `server`. */
export type ServerKind =
  | 'token-bucket-continuous'
  | 'token-bucket-stepped'
  | 'fixed-window'
  | 'sliding-window-log'
  | 'sliding-window-counter'
  | 'gcra'
  | 'leaky-bucket'

/** A quota in the paper's terms: a bucket of `capacity` units refilled at `perMinute` units per minute. */
export interface QuotaConfig {
  capacity: number
  perMinute: number
  /** Stepped refill: `perMinute * stepIntervalMs / 60000` units every `stepIntervalMs` (default 60 000: 80 every 60 s). */
  stepIntervalMs?: number
}
