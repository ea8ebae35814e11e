// The mark on a response polite-fetch hands back after giving up (`giveUp: 'response'`):
// the server's own 429/503 with two header fields more. One names why polite-fetch
// stopped and when the server would accept again; the other is the field OpenAI's and
// Anthropic's SDKs (and others that copied them) read before their own retry logic, so
// they raise their rate-limit error at once instead of sending the request again into a
// lane that polite-fetch already knows is closed.
import { isoTime } from './iso-time.js'

/** `<reason>; retry-at="<ISO time>"` (a Structured Field item; `retry-at` only when known). */
export const GIVE_UP_HEADER = 'x-polite-fetch-give-up'
/** Set to `false` on a give-up response: retrying now cannot help (see above). */
export const SHOULD_RETRY_HEADER = 'x-should-retry'

export function giveUpHeaderValue(reason: string, retryAt: number | undefined): string {
  // Left out when no date can hold it (see iso-time.ts).
  const iso = retryAt === undefined ? undefined : isoTime(retryAt)
  return iso === undefined ? reason : `${reason}; retry-at="${iso}"`
}

/** The two fields as name/value pairs, for shells that build raw header lists. */
export function giveUpFields(reason: string, retryAt: number | undefined): [string, string][] {
  return [
    [GIVE_UP_HEADER, giveUpHeaderValue(reason, retryAt)],
    [SHOULD_RETRY_HEADER, 'false'],
  ]
}
