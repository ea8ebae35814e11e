// Shared by the signal tests: one fixed client clock and a Headers builder.

/** 2025-09-23T12:00:00Z, the client's clock in every table. */
export const NOW = Date.UTC(2025, 8, 23, 12, 0, 0)
export const NOW_SECONDS = NOW / 1000
/** NOW as an IMF-fixdate, for `Date` headers that agree with the client. */
export const NOW_HTTP_DATE = 'Tue, 23 Sep 2025 12:00:00 GMT'

/** Headers from a record; array values become repeated field lines (joined with ", " by Headers). */
export function headersOf(fields: Record<string, string | string[]>): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(fields)) {
    for (const line of Array.isArray(value) ? value : [value]) headers.append(name, line)
  }
  return headers
}
