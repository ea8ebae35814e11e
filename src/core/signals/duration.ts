// Go-style duration strings: OpenAI's `x-ratelimit-reset-*` ("1s", "6m0s",
// "20ms", "1h2m3.5s") and Traefik/oxy's `X-Retry-In` ("30s"). Grammar as Go's
// time.ParseDuration: one or more <decimal><unit> with units h m s ms us µs μs
// ns, or a lone "0". Leniency: a bare number is read as seconds, because
// OpenAI-compatible servers sometimes send one. Negative durations are invalid
// here (a wait cannot be negative).

const MAX_DURATION_LENGTH = 64

/** <decimal>: digits, optionally "." digits; at least one digit overall. */
const DECIMAL = '(\\d+\\.?\\d*|\\.\\d+)'
const UNIT = '(h|ms|m|s|[u\u00b5\u03bc]s|ns)' // µ MICRO SIGN and μ GREEK SMALL LETTER MU both spell micro
const DURATION = new RegExp(`^\\+?(?:${DECIMAL}${UNIT})+$`)
const COMPONENT = new RegExp(`${DECIMAL}${UNIT}`, 'g')
/** No unit: only a lone number is allowed ("0" in Go; seconds by our leniency). */
const LONE_NUMBER = new RegExp(`^\\+?${DECIMAL}$`)
/** Milliseconds per unit, by the unit's first letter ("ms" apart). */
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, ms: 1, s: 1000, u: 1e-3, '\u00b5': 1e-3, '\u03bc': 1e-3, n: 1e-6 }

/** Milliseconds of a duration string, or undefined when malformed or negative. */
export function parseDurationMs(text: string): number | undefined {
  const value = text.trim()
  if (value.length > MAX_DURATION_LENGTH) return undefined
  const lone = LONE_NUMBER.exec(value)
  if (lone !== null) return Number(lone[1]) * 1000
  if (!DURATION.test(value)) return undefined
  let totalMs = 0
  for (const [, amount, unit] of value.matchAll(COMPONENT)) {
    totalMs += Number(amount) * (UNIT_MS[unit === 'ms' ? unit : (unit as string)[0] as string] as number)
  }
  return Number.isFinite(totalMs) ? totalMs : undefined
}
