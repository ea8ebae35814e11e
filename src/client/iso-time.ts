// An epoch-ms moment as an ISO 8601 string, for error messages and the give-up mark. A
// time the limiter computes can lie past any date (a pacer's wait for a call of huge cost
// is finite yet far beyond year 275 760), and Date#toISOString throws a RangeError there.

/** The largest distance from the epoch a Date holds, in ms (ECMA-262: 100 000 000 days). */
export const MAX_DATE_MS = 8.64e15

/** The ISO time of `ms`, or undefined when no Date can hold it. */
export function isoTime(ms: number): string | undefined {
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? new Date(ms).toISOString() : undefined
}
