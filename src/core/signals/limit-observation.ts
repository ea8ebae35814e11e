// What the dialect readers hand to readSignals: every limit a response announced,
// in one shape, before the most restrictive one is chosen.
import type { QuotaPolicy } from '../types.js'

export interface LimitObservation {
  /** Policy name; `default` (or the unit, for OpenAI/Anthropic) when the server gave none. */
  name: string
  /** True when the server named the limit (IETF name, GitHub resource, Discord bucket, …). */
  named: boolean
  /** `requests` unless the server says otherwise; only `requests` limits pace attempts. */
  unit: string
  remaining?: number
  limit?: number
  /** Epoch ms on our clock. */
  resetAt?: number
}

/** Collected by the readers; one per readSignals call that saw rate-limit headers. */
export interface Observations {
  limits: LimitObservation[]
  policies: QuotaPolicy[]
}

export const DEFAULT_POLICY = 'default'
export const REQUESTS_UNIT = 'requests'
