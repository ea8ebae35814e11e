// RFC 3339 timestamps (Anthropic's `anthropic-ratelimit-*-reset`), parsed by
// position: "2024-04-03T12:34:56Z", "2024-04-03T12:34:56.789+02:00".
import { build } from './http-date.js'

/** Date, "T" (or "t" or a space), time, an optional fraction, then "Z" or a ±HH:MM offset. */
const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:[Zz]|([+-])(\d\d):(\d\d))$/

/** Epoch ms of an RFC 3339 date-time, or undefined when malformed or impossible. */
export function parseRfc3339(text: string): number | undefined {
  const found = RFC3339.exec(text.trim())
  if (found === null) return undefined
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = found
  const at = build(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second))
  if (at === undefined || Number(offsetHours ?? 0) > 23 || Number(offsetMinutes ?? 0) > 59) return undefined
  const offset = (Number(offsetHours ?? 0) * 60 + Number(offsetMinutes ?? 0)) * (sign === '-' ? -1 : 1)
  // Whole milliseconds: the fraction's first three digits.
  return at + Number(((fraction ?? '') + '00').slice(0, 3)) - offset * 60_000
}
