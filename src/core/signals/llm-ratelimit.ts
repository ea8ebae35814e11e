// The per-unit limit headers of the LLM APIs, which meter requests and tokens
// separately:
//   OpenAI     x-ratelimit-{limit,remaining,reset}-{requests,tokens};
//              reset = Go-style duration ("1s", "6m0s", "20ms")
//   Anthropic  anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset};
//              reset = RFC 3339 timestamp
// Only the `requests` limit paces attempts (unit `requests`); the token limits are
// reported as policies with unit `tokens`, named after the header's quota kind.
import { readField, type HeaderSource } from './header-source.js'
import { parseDurationMs } from './duration.js'
import { REQUESTS_UNIT, type Observations } from './limit-observation.js'
import { parseCount } from './parse-number.js'
import type { TimeBase } from './reset-time.js'
import { parseRfc3339 } from './rfc3339.js'

export const LLM_SENTINELS = [
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'anthropic-ratelimit-requests-remaining',
  'anthropic-ratelimit-tokens-remaining',
] as const

const TOKENS_UNIT = 'tokens'

/** One metered quota kind and the names of its three fields (built once, not per response). */
interface QuotaFields {
  kind: string
  remaining: string
  limit: string
  reset: string
}

const OPENAI_FIELDS: readonly QuotaFields[] = ['requests', 'tokens'].map((kind) => ({
  kind,
  remaining: `x-ratelimit-remaining-${kind}`,
  limit: `x-ratelimit-limit-${kind}`,
  reset: `x-ratelimit-reset-${kind}`,
}))

const ANTHROPIC_FIELDS: readonly QuotaFields[] = ['requests', 'tokens', 'input-tokens', 'output-tokens'].map(
  (kind) => ({
    kind,
    remaining: `anthropic-ratelimit-${kind}-remaining`,
    limit: `anthropic-ratelimit-${kind}-limit`,
    reset: `anthropic-ratelimit-${kind}-reset`,
  }),
)

export function readLlmRateLimit(headers: HeaderSource, time: TimeBase, out: Observations): void {
  for (const fields of OPENAI_FIELDS) {
    const remaining = parseCount(readField(headers, fields.remaining))
    if (remaining === undefined) continue
    const limit = parseCount(readField(headers, fields.limit))
    const reset = readField(headers, fields.reset)
    const resetMs = reset === undefined ? undefined : parseDurationMs(reset)
    push(out, fields.kind, remaining, limit, resetMs === undefined ? undefined : time.afterDelay(resetMs))
  }

  for (const fields of ANTHROPIC_FIELDS) {
    const remaining = parseCount(readField(headers, fields.remaining))
    if (remaining === undefined) continue
    const limit = parseCount(readField(headers, fields.limit))
    const reset = readField(headers, fields.reset)
    const resetMoment = reset === undefined ? undefined : parseRfc3339(reset)
    push(out, fields.kind, remaining, limit, resetMoment === undefined ? undefined : time.atMoment(resetMoment))
  }
}

function push(
  out: Observations,
  kind: string,
  remaining: number,
  limit: number | undefined,
  resetAt: number | undefined,
): void {
  const unit = kind === 'requests' ? REQUESTS_UNIT : TOKENS_UNIT
  // The name is ours (the quota kind), not the server's: `named: false` keeps it out of scoping.
  out.limits.push({ name: kind, named: false, unit, remaining, limit, resetAt })
  if (limit !== undefined) out.policies.push({ name: kind, quota: limit, unit })
}
