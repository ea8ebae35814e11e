// HTTP-date (RFC 9110 §5.6.7), parsed by position rather than through
// Date.parse, whose handling of the obsolete forms differs between engines.
// Recipients MUST accept all three forms:
//   IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//   RFC 850      Sunday, 06-Nov-94 08:49:37 GMT
//   asctime      Sun Nov  6 08:49:37 1994
// Names are case-sensitive, as the grammar says. The day name must be a real one
// but is not checked against the date (a wrong weekday costs nothing here).

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const MONTH = `(${MONTHS.join('|')})`
const SHORT_DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const TIME = '(\\d\\d):(\\d\\d):(\\d\\d)'
// Each form's captures in the order year, month, day, hour, minute, second (see `FORMS`).
const IMF_FIXDATE = new RegExp(`^${SHORT_DAY}, (\\d\\d) ${MONTH} (\\d{4}) ${TIME} GMT$`)
const RFC850 = new RegExp(`^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (\\d\\d)-${MONTH}-(\\d\\d) ${TIME} GMT$`)
/** The day is two digits or a space and one digit ("Nov  6"). */
const ASCTIME = new RegExp(`^${SHORT_DAY} ${MONTH} ( \\d|\\d\\d) ${TIME} (\\d{4})$`)
/** Per form, the capture index of year, month, day, hour, minute, second. */
const FORMS: Array<[RegExp, number[]]> = [
  [IMF_FIXDATE, [3, 2, 1, 4, 5, 6]],
  [RFC850, [3, 2, 1, 4, 5, 6]],
  [ASCTIME, [6, 1, 2, 3, 4, 5]],
]

/**
 * Epoch ms of an HTTP-date, or undefined when the text is none of the three forms
 * or names an impossible date. `nowMs` resolves RFC 850's two-digit year.
 */
export function parseHttpDate(text: string, nowMs: number): number | undefined {
  const value = text.trim()
  for (const [form, order] of FORMS) {
    const found = form.exec(value)
    if (found === null) continue
    const [year, month, day, hour, minute, second] = order.map((index) => found[index] as string)
    return build(
      form === RFC850 ? fullYear(Number(year), nowMs) : Number(year),
      MONTHS.indexOf(month as string) + 1,
      Number(day),
      Number(hour),
      Number(minute),
      Number(second),
    )
  }
  return undefined
}

/**
 * RFC 9110: a two-digit year that appears more than 50 years in the future means
 * the most recent past year with the same last two digits.
 */
function fullYear(twoDigitYear: number, nowMs: number): number {
  const currentYear = Number.isFinite(nowMs) ? new Date(nowMs).getUTCFullYear() : 2000
  let year = currentYear - (currentYear % 100) + twoDigitYear
  if (year > currentYear + 50) year -= 100
  return year
}

/**
 * Epoch ms of a UTC date and time given as numbers (month 1–12), or undefined when impossible.
 * Second 60 (a leap second) is allowed. Shared with the RFC 3339 reader.
 */
export function build(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined
  // Not Date.UTC, which reads years 0–99 as 1900–1999: "31 Dec 0099" would be 1999-12-31, a
  // wait of months to a clock in the 1900s for a moment nineteen centuries past.
  const midnight = new Date(0).setUTCFullYear(year, month - 1, day)
  // 31 Feb rolls over into March; an impossible date is malformed.
  if (new Date(midnight).getUTCDate() !== day) return undefined
  return midnight + (hour * 3600 + minute * 60 + second) * 1000
}
