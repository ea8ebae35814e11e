// The fast path. Almost every response carries no rate-limit header at all, and
// must cost next to nothing. A WHATWG `Headers.get` is surprisingly dear (brand
// check, name validation, lower-casing: ~14 of them cost more than walking a
// typical response's names once), so a source that can enumerate its fields is
// walked once, keeping only the fields this reader understands; a bare `get`
// source is probed with one `get` per sentinel name instead.
import type { HeaderSource } from './header-source.js'
import { IETF_SENTINELS } from './ratelimit-ietf.js'
import { LLM_SENTINELS } from './llm-ratelimit.js'
import { RETRY_SENTINELS } from './retry-after.js'
import { SHOULD_RETRY_FIELD } from './should-retry.js'
import { X_RATELIMIT_SENTINELS } from './x-ratelimit.js'

/**
 * For sources without `forEach`: the names whose presence means there is
 * something to read (each dialect is read only when its sentinel is present).
 */
export const SIGNAL_HEADER_NAMES: readonly string[] = [
  ...RETRY_SENTINELS,
  ...IETF_SENTINELS,
  ...X_RATELIMIT_SENTINELS,
  ...LLM_SENTINELS,
  SHOULD_RETRY_FIELD,
]

/** What a `Headers` (WHATWG or undici's own class) and a `Map` both offer. */
interface EnumerableSource extends HeaderSource {
  forEach(callback: (value: string, name: string) => void): void
}

/**
 * A source holding what the readers need, or undefined when the response has no
 * field any reader understands (then nothing is allocated but the walk itself).
 */
export function signalFields(headers: HeaderSource): HeaderSource | undefined {
  if (typeof (headers as Partial<EnumerableSource>).forEach === 'function') {
    return snapshot(headers as EnumerableSource)
  }
  for (let i = 0; i < SIGNAL_HEADER_NAMES.length; i++) {
    if (headers.get(SIGNAL_HEADER_NAMES[i] as string) != null) return headers
  }
  return undefined
}

function snapshot(headers: EnumerableSource): HeaderSource | undefined {
  let fields: Map<string, string> | undefined
  let date: string | undefined
  headers.forEach((value, name) => {
    if (typeof name !== 'string' || typeof value !== 'string') return
    const lower = name.toLowerCase()
    if (lower === 'date') date = value
    else if (isSignalField(lower)) (fields ??= new Map()).set(lower, value)
  })
  if (fields === undefined) return undefined
  if (date !== undefined) fields.set('date', date)
  return new FieldSnapshot(fields)
}

class FieldSnapshot implements HeaderSource {
  readonly #fields: Map<string, string>
  constructor(fields: Map<string, string>) {
    this.#fields = fields
  }
  get(name: string): string | null {
    return this.#fields.get(name) ?? null
  }
}

/** Every field name any reader asks for: retry-after*, ratelimit*, beta-ratelimit*, x-ratelimit*, x-should-retry, … */
export function isSignalField(name: string): boolean {
  switch (name.charCodeAt(0)) {
    case 114: // r
      return name.startsWith('retry-after') || name.startsWith('ratelimit')
    case 120: // x
      return (
        name.startsWith('x-ratelimit') ||
        name.startsWith('x-rate-limit') ||
        name === 'x-amz-retry-after' ||
        name === 'x-retry-in' ||
        name === SHOULD_RETRY_FIELD
      )
    case 97: // a
      return name.startsWith('anthropic-ratelimit')
    case 98: // b
      return name.startsWith('beta-ratelimit')
    default:
      return false
  }
}
