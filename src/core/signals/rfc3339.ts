// RFC 3339 timestamps (Anthropic's `anthropic-ratelimit-*-reset`), parsed by
// position: "2024-04-03T12:34:56Z", "2024-04-03T12:34:56.789+02:00".
import { digits } from './http-date.js'

/** Epoch ms of an RFC 3339 date-time, or undefined when malformed or impossible. */
export function parseRfc3339(text: string): number | undefined {
  const value = text.trim()
  if (value.length < 20 || value[4] !== '-' || value[7] !== '-' || value[13] !== ':' || value[16] !== ':') {
    return undefined
  }
  const separator = value[10]
  if (separator !== 'T' && separator !== 't' && separator !== ' ') return undefined
  const year = digits(value, 0, 4)
  const month = digits(value, 5, 2)
  const day = digits(value, 8, 2)
  const hour = digits(value, 11, 2)
  const minute = digits(value, 14, 2)
  const second = digits(value, 17, 2)
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return undefined
  if (minute < 0 || minute > 59 || second < 0 || second > 60) return undefined

  let at = 19
  let fractionMs = 0
  if (value[at] === '.') {
    at++
    const start = at
    let scale = 100
    while (at < value.length && value.charCodeAt(at) >= 48 && value.charCodeAt(at) <= 57) {
      fractionMs += (value.charCodeAt(at) - 48) * scale
      scale /= 10
      at++
    }
    if (at === start) return undefined
  }

  const offsetMinutes = parseOffset(value, at)
  if (offsetMinutes === undefined) return undefined

  const midnight = Date.UTC(year, month - 1, day)
  if (new Date(midnight).getUTCDate() !== day) return undefined
  return midnight + (hour * 3600 + minute * 60 + second) * 1000 + Math.floor(fractionMs) - offsetMinutes * 60_000
}

/** "Z" → 0, "+02:00" → 120, "-05:30" → -330; anything else (or trailing text) → undefined. */
function parseOffset(value: string, at: number): number | undefined {
  const sign = value[at]
  if ((sign === 'Z' || sign === 'z') && at + 1 === value.length) return 0
  if ((sign !== '+' && sign !== '-') || at + 6 !== value.length || value[at + 3] !== ':') return undefined
  const hours = digits(value, at + 1, 2)
  const minutes = digits(value, at + 4, 2)
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined
  const total = hours * 60 + minutes
  return sign === '-' ? -total : total
}
