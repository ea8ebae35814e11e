// Go-style duration strings: OpenAI's `x-ratelimit-reset-*` ("1s", "6m0s",
// "20ms", "1h2m3.5s") and Traefik/oxy's `X-Retry-In` ("30s"). Grammar as Go's
// time.ParseDuration: one or more <decimal><unit> with units h m s ms us µs μs
// ns, or a lone "0". Leniency: a bare number is read as seconds, because
// OpenAI-compatible servers sometimes send one. Negative durations are invalid
// here (a wait cannot be negative).

const MAX_DURATION_LENGTH = 64

/** Milliseconds of a duration string, or undefined when malformed or negative. */
export function parseDurationMs(text: string): number | undefined {
  const value = text.trim()
  const length = value.length
  if (length === 0 || length > MAX_DURATION_LENGTH) return undefined
  let at = value[0] === '+' ? 1 : 0
  if (at === length) return undefined

  let totalMs = 0
  let components = 0
  while (at < length) {
    // <decimal>: digits, optionally "." digits; at least one digit overall.
    const start = at
    let sawDigit = false
    let sawDot = false
    for (; at < length; at++) {
      const code = value.charCodeAt(at)
      if (code >= 48 && code <= 57) sawDigit = true
      else if (code === 46 && !sawDot) sawDot = true
      else break
    }
    if (!sawDigit) return undefined
    const amount = Number(value.slice(start, at))
    if (!Number.isFinite(amount)) return undefined

    const unitMs = unitAt(value, at)
    if (unitMs === undefined) {
      // No unit: only a lone number is allowed ("0" in Go; seconds by our leniency).
      if (at !== length || components > 0) return undefined
      return amount * 1000
    }
    at += unitMs.length
    totalMs += amount * unitMs.ms
    components++
  }
  return Number.isFinite(totalMs) ? totalMs : undefined
}

interface Unit {
  readonly ms: number
  readonly length: number
}
const HOUR: Unit = { ms: 3_600_000, length: 1 }
const MINUTE: Unit = { ms: 60_000, length: 1 }
const SECOND: Unit = { ms: 1000, length: 1 }
const MILLISECOND: Unit = { ms: 1, length: 2 }
const MICROSECOND: Unit = { ms: 1e-3, length: 2 }
const NANOSECOND: Unit = { ms: 1e-6, length: 2 }

function unitAt(value: string, at: number): Unit | undefined {
  const first = value[at]
  const second = value[at + 1]
  switch (first) {
    case 'h':
      return HOUR
    case 'm':
      return second === 's' ? MILLISECOND : MINUTE
    case 's':
      return SECOND
    case 'u':
    case '\u00b5': // µ MICRO SIGN
    case '\u03bc': // μ GREEK SMALL LETTER MU
      return second === 's' ? MICROSECOND : undefined
    case 'n':
      return second === 's' ? NANOSECOND : undefined
    default:
      return undefined
  }
}
