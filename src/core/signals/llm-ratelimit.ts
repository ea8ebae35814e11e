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
const OPENAI_KINDS = ['requests', 'tokens'] as const
const ANTHROPIC_KINDS = ['requests', 'tokens', 'input-tokens', 'output-tokens'] as const

export function readLlmRateLimit(headers: HeaderSource, time: TimeBase, out: Observations): void {
  for (const kind of OPENAI_KINDS) {
    const remaining = parseCount(readField(headers, `x-ratelimit-remaining-${kind}`))
    if (remaining === undefined) continue
    const limit = parseCount(readField(headers, `x-ratelimit-limit-${kind}`))
    const reset = readField(headers, `x-ratelimit-reset-${kind}`)
    const resetMs = reset === undefined ? undefined : parseDurationMs(reset)
    push(out, kind, remaining, limit, resetMs === undefined ? undefined : time.afterDelay(resetMs))
  }

  for (const kind of ANTHROPIC_KINDS) {
    const remaining = parseCount(readField(headers, `anthropic-ratelimit-${kind}-remaining`))
    if (remaining === undefined) continue
    const limit = parseCount(readField(headers, `anthropic-ratelimit-${kind}-limit`))
    const reset = readField(headers, `anthropic-ratelimit-${kind}-reset`)
    const resetMoment = reset === undefined ? undefined : parseRfc3339(reset)
    push(out, kind, remaining, limit, resetMoment === undefined ? undefined : time.atMoment(resetMoment))
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
