// HTTP-date (RFC 9110 §5.6.7), parsed by position rather than through
// Date.parse, whose handling of the obsolete forms differs between engines.
// Recipients MUST accept all three forms:
//   IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//   RFC 850      Sunday, 06-Nov-94 08:49:37 GMT
//   asctime      Sun Nov  6 08:49:37 1994
// Names are case-sensitive, as the grammar says. The day name must be a real one
// but is not checked against the date (a wrong weekday costs nothing here).

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const SHORT_DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
const LONG_DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']

const IMF_FIXDATE_LENGTH = 29 // "Sun, 06 Nov 1994 08:49:37 GMT"
const ASCTIME_LENGTH = 24 // "Sun Nov  6 08:49:37 1994"
const RFC850_TAIL_LENGTH = 22 // "06-Nov-94 08:49:37 GMT"

/**
 * Epoch ms of an HTTP-date, or undefined when the text is none of the three forms
 * or names an impossible date. `nowMs` resolves RFC 850's two-digit year.
 */
export function parseHttpDate(text: string, nowMs: number): number | undefined {
  const value = text.trim()
  if (value.length === IMF_FIXDATE_LENGTH && value.charCodeAt(3) === 44 /* , */) return parseImfFixdate(value)
  if (value.length === ASCTIME_LENGTH) return parseAsctime(value)
  return parseRfc850(value, nowMs)
}

function parseImfFixdate(value: string): number | undefined {
  if (!SHORT_DAYS.includes(value.slice(0, 3)) || value[4] !== ' ' || value[7] !== ' ' || value[11] !== ' ') {
    return undefined
  }
  if (value[16] !== ' ' || value[25] !== ' ' || !value.endsWith('GMT')) return undefined
  return build(digits(value, 12, 4), monthAt(value, 8), digits(value, 5, 2), secondsOfDay(value, 17))
}

function parseAsctime(value: string): number | undefined {
  if (!SHORT_DAYS.includes(value.slice(0, 3)) || value[3] !== ' ' || value[7] !== ' ' || value[10] !== ' ') {
    return undefined
  }
  if (value[19] !== ' ') return undefined
  // The day is two digits or a space and one digit ("Nov  6").
  const day = value[8] === ' ' ? digits(value, 9, 1) : digits(value, 8, 2)
  return build(digits(value, 20, 4), monthAt(value, 4), day, secondsOfDay(value, 11))
}

function parseRfc850(value: string, nowMs: number): number | undefined {
  const comma = value.indexOf(',')
  if (comma === -1 || !LONG_DAYS.includes(value.slice(0, comma)) || value[comma + 1] !== ' ') return undefined
  const at = comma + 2
  if (value.length - at !== RFC850_TAIL_LENGTH) return undefined
  if (value[at + 2] !== '-' || value[at + 6] !== '-' || value[at + 9] !== ' ' || value[at + 18] !== ' ') {
    return undefined
  }
  if (!value.endsWith('GMT')) return undefined
  const twoDigitYear = digits(value, at + 7, 2)
  if (twoDigitYear < 0) return undefined
  return build(
    fullYear(twoDigitYear, nowMs),
    monthAt(value, at + 3),
    digits(value, at, 2),
    secondsOfDay(value, at + 10),
  )
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

function build(year: number, month: number, day: number, seconds: number): number | undefined {
  if (year < 0 || month < 0 || day < 1 || seconds < 0) return undefined
  const midnight = Date.UTC(year, month, day)
  // Date.UTC rolls 31 Feb over into March; an impossible date is malformed.
  if (new Date(midnight).getUTCDate() !== day) return undefined
  return midnight + seconds * 1000
}

/** "HH:MM:SS" at `at` → seconds since midnight, or -1. Second 60 (a leap second) is allowed. */
function secondsOfDay(value: string, at: number): number {
  if (value[at + 2] !== ':' || value[at + 5] !== ':') return -1
  const hour = digits(value, at, 2)
  const minute = digits(value, at + 3, 2)
  const second = digits(value, at + 6, 2)
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return -1
  return hour * 3600 + minute * 60 + second
}

function monthAt(value: string, at: number): number {
  return MONTHS.indexOf(value.slice(at, at + 3))
}

/** The `count` ASCII digits at `at` as a number, or -1 if any is not a digit. */
export function digits(value: string, at: number, count: number): number {
  let number = 0
  for (let i = at; i < at + count; i++) {
    const code = value.charCodeAt(i)
    if (!(code >= 48 && code <= 57)) return -1
    number = number * 10 + (code - 48)
  }
  return number
}
