// `x-should-retry`: the server's own word on whether this request may be sent again.
// OpenAI and Anthropic send it (their Stainless-generated SDKs obey it before looking at
// the status): `true` on errors that are safe to repeat, `false` on ones that are not.
// Only the two literal values count (case-insensitive, surrounding spaces allowed);
// anything else is ignored, as a malformed header is.
import { readField, type HeaderSource } from './header-source.js'

export const SHOULD_RETRY_FIELD = 'x-should-retry'

/** true / false when the server said so, undefined when it did not (or said something else). */
export function readShouldRetry(headers: HeaderSource): boolean | undefined {
  const value = readField(headers, SHOULD_RETRY_FIELD)?.trim().toLowerCase()
  if (value === 'true') return true
  if (value === 'false') return false
  return undefined
}
