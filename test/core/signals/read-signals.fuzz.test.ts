// Fuzz: malformed headers are ignored (never trusted, never fatal), and a wait derived
// from a header is never longer than what the header says.
//
// read-signals.property.test.ts checks that any Signal is well formed (no NaN, no
// negative or infinite delay). This file checks the values themselves against an
// oracle: every generated field value carries what it says (a delay, or a moment on the
// server's clock) or that it is malformed, rendered from that meaning in the forms the
// project accepts, or spoiled in ways it promises to reject (signs, exponents, hex,
// unicode digits, quotes, separators, 100 KB values, impossible dates, …). The oracle is
// the documented rules (reset-time.ts): a delay is added to now; a moment is moved by the
// server clock's lead as its `Date` tells it; a past moment means now; more than a year
// ahead means nothing. Deterministic: fixed seeds, bounded runs, no wall clock (the time
// each parser takes on 100 KB inputs was measured apart, and is linear).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseDurationMs } from '../../../src/core/signals/duration.js'
import type { HeaderSource } from '../../../src/core/signals/header-source.js'
import { parseHttpDate } from '../../../src/core/signals/http-date.js'
import { parseNonNegativeDecimal } from '../../../src/core/signals/parse-number.js'
import { readSignals, SIGNAL_HEADER_NAMES } from '../../../src/core/signals/read-signals.js'
import { MAX_HORIZON_MS } from '../../../src/core/signals/reset-time.js'
import { parseRfc3339 } from '../../../src/core/signals/rfc3339.js'
import { parseSfDictionary, parseSfList } from '../../../src/core/signals/structured-field.js'
import type { Signal } from '../../../src/core/types.js'
import { NOW } from './fixtures.js'

/** Fixed; set FUZZ_SEED to explore other runs by hand (a failure prints the seed and path to replay). */
const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_2025)
const HOUR = 3_600_000
const DAY = 24 * HOUR
const YEAR = 365 * DAY
/** Decimal seconds × 1000 in floating point is not exact (1.1 × 1000 = 1100.0000000000002). */
const FLOAT_SLACK_MS = 0.01
const HUGE = 100_000

type Pairs = Array<[name: string, value: string]>

// ---------------------------------------------------------------------------------------
// The client's clock and the server's `Date`

interface Clock {
  /** The client's clock when the response arrived. */
  now: number
  /** The response's `Date` field, if any (possibly malformed or absurd). */
  date?: string
  /** The moment that `date` names, when it is a well-formed HTTP-date. */
  dateMs?: number
  /** The server's clock, which its absolute moments are given on. */
  base: number
}

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const LONG_DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const pad = (value: number, width: number, fill = '0'): string => String(value).padStart(width, fill)

/** Earliest and latest moments a four-digit year can name. */
const YEAR_1 = new Date(0).setUTCFullYear(1, 0, 1)
const YEAR_9999_END = Date.UTC(9999, 11, 31, 23, 59, 59)

type DateForm = 'imf' | 'rfc850' | 'asctime'

/**
 * The year RFC 9110 §5.6.7 makes of an RFC 850 two-digit year: in the current century, unless that
 * appears more than 50 years in the future, then the century before.
 */
function rfc850Year(twoDigits: number, now: number): number {
  const current = new Date(now).getUTCFullYear()
  const year = current - (current % 100) + twoDigits
  return year > current + 50 ? year - 100 : year
}

/** An HTTP-date of `ms` (whole seconds) in one of the three forms (RFC 850 only when its two digits name this year). */
function httpDate(ms: number, form: DateForm, now: number): string {
  const d = new Date(ms)
  const year = d.getUTCFullYear()
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`
  const month = MONTHS[d.getUTCMonth()] as string
  if (form === 'rfc850' && rfc850Year(year % 100, now) === year) {
    return `${LONG_DAY_NAMES[d.getUTCDay()]}, ${pad(d.getUTCDate(), 2)}-${month}-${pad(year % 100, 2)} ${time} GMT`
  }
  if (form === 'asctime') return `${DAY_NAMES[d.getUTCDay()]} ${month} ${pad(d.getUTCDate(), 2, ' ')} ${time} ${pad(year, 4)}`
  return `${DAY_NAMES[d.getUTCDay()]}, ${pad(d.getUTCDate(), 2)} ${month} ${pad(year, 4)} ${time} GMT`
}

const wholeSecond = (ms: number): number => Math.floor(ms / 1000) * 1000

/** A clock whose server sent a well-formed `Date` of `dateMs` (moments are given on that clock). */
const dated = (now: number, dateMs: number): Clock => ({ now, date: httpDate(dateMs, 'imf', now), dateMs, base: dateMs })

const clock: fc.Arbitrary<Clock> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ now: NOW, base: NOW }) },
  // Agreeing, the same second or the one before (the answer crossed a second's boundary).
  fc.integer({ min: 0, max: 1999 }).map((late) => dated(NOW + late, NOW)),
  // Skewed either way, up to (and past) a year.
  fc
    .integer({ min: -400, max: 400 })
    .chain((days) => fc.integer({ min: -DAY / 1000, max: DAY / 1000 }).map((seconds) => days * DAY + seconds * 1000))
    .map((lead) => dated(NOW, NOW + lead)),
  // Decades off: a broken server clock.
  fc.integer({ min: -40, max: 40 }).map((years) => dated(NOW, wholeSecond(NOW + years * YEAR))),
  // A malformed Date: moments are taken on our clock.
  fc
    .constantFrom('yesterday', 'Tue, 23 Sep 2025 12:00:00 UTC', new Date(NOW).toString(), '2025-09-23T12:00:00Z', 'Tue, 23 Sep 2025 12:00:00 GMT, Tue, 23 Sep 2025 12:00:00 GMT', '')
    .map((date) => ({ now: NOW, date, base: NOW })),
  // A device whose clock was reset (1970 to 2000): old-looking dates can be in its future.
  fc.integer({ min: 0, max: 30 * YEAR }).map((now) => ({ now, base: now })),
)

/**
 * The server clock's lead as readSignals may use it (the documented rules, reset-time.ts): none
 * without a well-formed Date, or with one more than a year off, or one naming our second or the one before.
 */
function leadOf(at: Clock): number {
  const date = at.dateMs
  if (date === undefined || Math.abs(date - at.now) > MAX_HORIZON_MS) return 0
  return date <= at.now && at.now < date + 2000 ? 0 : date - at.now
}

// ---------------------------------------------------------------------------------------
// What a value says, and its renderings

/** A field value and what it says: a wait in ms (0 for a past moment), or undefined for no wait at all. */
interface Told {
  text: string
  /** The wait the reader must derive, when the value is well formed and within a year. */
  waitMs: number | undefined
  /** False for a malformed value (the reader must ignore it). */
  valid: boolean
  /** A malformed Structured Field member, which makes the whole field malformed. */
  breaksField?: boolean
}

function delayWait(delayMs: number): number | undefined {
  return delayMs >= 0 && delayMs <= MAX_HORIZON_MS ? delayMs : undefined
}

function momentWait(moment: number, at: Clock): number | undefined {
  const wait = moment - leadOf(at) - at.now
  return wait > MAX_HORIZON_MS ? undefined : Math.max(0, wait)
}

/** A numeric reset whose unit is its magnitude (reset-time.ts): epoch ms, epoch seconds, else delay seconds. */
function magnitudeWait(value: number, at: Clock): number | undefined {
  if (value >= 1e12) return momentWait(value, at)
  if (value >= 1e9) return momentWait(value * 1000, at)
  return delayWait(value * 1000)
}

/** ms as decimal seconds: "5", "1.5", "0.001" (never an exponent). */
function seconds(ms: number): string {
  return ms % 1000 === 0 ? String(ms / 1000) : (ms / 1000).toFixed(3).replace(/0+$/, '')
}

const delayMs = fc.oneof(
  fc.integer({ min: 0, max: 10_000 }),
  fc.integer({ min: 0, max: 2 * HOUR }),
  fc.integer({ min: MAX_HORIZON_MS - DAY, max: MAX_HORIZON_MS + DAY }),
  fc.integer({ min: 0, max: 100 * YEAR }),
)

/** An offset from the server's now for an absolute moment: near, past, around the horizon, centuries. */
const momentOffset = fc.oneof(
  fc.integer({ min: 0, max: 2 * HOUR }),
  fc.integer({ min: -2 * HOUR, max: 0 }),
  fc.integer({ min: MAX_HORIZON_MS - 2 * DAY, max: MAX_HORIZON_MS + 2 * DAY }),
  fc.integer({ min: -100 * YEAR, max: 100 * YEAR }),
)

/** A moment on the server's clock, sometimes in a year far in the past or future (0001 to 9999). */
function moment(at: Clock): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 3, arbitrary: momentOffset.map((offset) => at.base + offset) },
    // About now, centuries ago: a year that looks like the present one with its century cut off ("0099").
    fc.tuple(fc.constantFrom(1, 5, 19, 20), fc.integer({ min: -2 * HOUR, max: 2 * DAY })).map(([centuries, offset]) => {
      const date = new Date(at.base + offset)
      return date.setUTCFullYear(date.getUTCFullYear() - 100 * centuries)
    }),
    fc.integer({ min: YEAR_1, max: YEAR_1 + 1000 * YEAR }),
    fc.integer({ min: YEAR_9999_END - 1000 * YEAR, max: YEAR_9999_END }),
  ).map((ms) => Math.min(YEAR_9999_END, Math.max(YEAR_1, ms)))
}

/** Optional OWS around a value (kept by a raw source; a Headers strips it). */
const ows = fc.constantFrom('', '', '', ' ', '\t', '  ')
const withOws = (text: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(ows, text, ows).map(([before, value, after]) => before + value + after)

/** Delay seconds as text, with optional leading zeros. */
function secondsText(ms: number): fc.Arbitrary<string> {
  return fc.constantFrom('', '', '00').map((zeros) => zeros + seconds(ms))
}

/** A Go duration for ms, in one of several equivalent spellings. */
function durationText(ms: number): fc.Arbitrary<string> {
  const h = Math.floor(ms / HOUR)
  const m = Math.floor((ms % HOUR) / 60_000)
  const s = Math.floor((ms % 60_000) / 1000)
  const rest = ms % 1000
  const go = ms < 1000 ? `${ms}ms` : `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}${rest > 0 ? `.${pad(rest, 3)}`.replace(/0+$/, '') : ''}s`
  const options = [go, `${seconds(ms)}`, `${ms}ms`, `${s}s${h}h${m}m${rest}ms`, `+${seconds(ms)}s`]
  if (ms < 1e9) options.push(`${ms * 1000}us`, `${ms * 1000}\u00b5s`)
  if (ms < 1e6) options.push(`${ms * 1_000_000}ns`)
  return fc.constantFrom(...options)
}

/** An RFC 3339 date-time for a moment, in some offset, with or without a fraction. */
function rfc3339Text(ms: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(0, 0, 60, -60, 330, -330, 23 * 60 + 59, -(23 * 60 + 59)), fc.constantFrom('T', 't', ' '), fc.constantFrom('', '456', '999999'), fc.constantFrom('Z', 'z', '+00:00', '-00:00'))
    .map(([offsetMinutes, separator, extraDigits, utc]) => {
      const local = new Date(ms + offsetMinutes * 60_000)
      const year = local.getUTCFullYear()
      if (year < 0 || year > 9999) return undefined
      const fraction = ms % 1000 === 0 && extraDigits === '' ? '' : `.${pad(((ms % 1000) + 1000) % 1000, 3)}${extraDigits}`
      const offset =
        offsetMinutes === 0 ? utc : `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offsetMinutes) / 60), 2)}:${pad(Math.abs(offsetMinutes) % 60, 2)}`
      return (
        `${pad(year, 4)}-${pad(local.getUTCMonth() + 1, 2)}-${pad(local.getUTCDate(), 2)}${separator}` +
        `${pad(local.getUTCHours(), 2)}:${pad(local.getUTCMinutes(), 2)}:${pad(local.getUTCSeconds(), 2)}${fraction}${offset}`
      )
    })
    .filter((text): text is string => text !== undefined)
}

// ---------------------------------------------------------------------------------------
// Spoiled values: forms the readers promise to reject

const ARABIC_INDIC = 0x0660
const FULLWIDTH = 0xff10
const DEVANAGARI = 0x0966
const SUPERSCRIPTS = ['\u2070', '\u00b9', '\u00b2', '\u00b3', '\u2074', '\u2075', '\u2076', '\u2077', '\u2078', '\u2079']

function otherDigits(text: string, script: number | 'superscript'): string {
  return text.replace(/\d/g, (digit) => (script === 'superscript' ? (SUPERSCRIPTS[Number(digit)] as string) : String.fromCharCode(script + Number(digit))))
}

/** Ways to spoil a number that every reader of numbers rejects. */
function spoiledNumber(text: string): fc.Arbitrary<string> {
  const digits = text.replace(/\D/g, '') || '5'
  return fc.constantFrom(
    `-${text}`,
    `+${text}`,
    `0x${Number(digits).toString(16)}`,
    `${digits}e0`,
    `${digits}E3`,
    `${text}abc`,
    `${text} s`,
    `${digits.slice(0, 1)} ${digits.slice(1) || '0'}`,
    `"${text}"`,
    `"${text}`,
    `${text}"`,
    `${text};w=1`,
    `${text};`,
    `, ${text}`,
    `.${digits}`,
    `${digits}.`,
    `${digits}..5`,
    `${'0'.repeat(40)}${digits}`,
    otherDigits(text, ARABIC_INDIC),
    otherDigits(text, FULLWIDTH),
    otherDigits(text, DEVANAGARI),
    otherDigits(text, 'superscript'),
    digits.repeat(Math.ceil(HUGE / digits.length)),
    `${text} `.repeat(Math.ceil(HUGE / (text.length + 1))),
  )
}

/** Values malformed for every field that carries a time or a count. */
const MALFORMED: readonly string[] = [
  '',
  ' ',
  '\t',
  '-1',
  '-0',
  '-0.5',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e400',
  '1e3',
  '1E3',
  '0x10',
  '0b101',
  '0o17',
  '\u0661\u0662\u0660',
  '\uff11\uff12\uff10',
  '\u00b9\u00b2',
  '\u00bd',
  '12abc',
  'abc',
  'null',
  'true',
  '"120"',
  '"120',
  '120"',
  '"',
  ';',
  ';;;',
  ',',
  ',,,',
  ', 120',
  '120;w=1',
  '1 20',
  '(',
  '((((',
  ')',
  '=',
  'r=',
  't=',
  ':',
  '?',
  '\\',
  '.5.5',
  'Sun, 06 Nov 1994 08:49:37 UTC',
  'sun, 06 nov 1994 08:49:37 gmt',
  'Sun, 31 Feb 2025 08:49:37 GMT',
  'Sun, 06 Nov 1994 24:00:00 GMT',
  'Sun, 6 Nov 1994 08:49:37 GMT',
  'Funday, 06-Nov-94 08:49:37 GMT',
  new Date(NOW + 5000).toString(),
  '2025-13-01T00:00:00Z',
  '2025-09-23T24:00:00Z',
  '2025-09-23T12:00:05+24:00',
  '2025-09-23T12:00:05',
  '9'.repeat(HUGE),
  '1'.repeat(HUGE),
  'a'.repeat(HUGE),
  '"'.repeat(HUGE),
  ','.repeat(HUGE),
  ';'.repeat(HUGE),
  '('.repeat(HUGE),
  '1m'.repeat(HUGE / 2),
  '5' + ' '.repeat(HUGE) + '5',
  `"${'a'.repeat(HUGE)}`,
  `${'a;b'.repeat(HUGE / 3)}`,
  `${'a, '.repeat(HUGE / 3)}`,
]

/** Moments far in the past: the server's "from then on" has come, so the wait is 0. */
const PAST: readonly string[] = [
  'Mon, 01 Jan 0001 00:00:00 GMT',
  'Fri, 31 Dec 0099 23:59:59 GMT',
  'Sun, 06 Nov 1994 08:49:37 GMT',
  'Sunday, 06-Nov-94 08:49:37 GMT',
  'Sun Nov  6 08:49:37 1994',
  'Thu, 01 Jan 1970 00:00:00 GMT',
  String(Math.floor(NOW / 1000) - 60),
  String(NOW - 60_000),
  '1000000000',
]

/** Moments too far ahead to obey: no wait. */
const FAR_FUTURE: readonly string[] = [
  'Fri, 31 Dec 9999 23:59:59 GMT',
  'Fri Dec 31 23:59:59 9999',
  String(Math.floor(NOW / 1000) + 2 * 365 * 86_400),
  String(NOW + 2 * YEAR),
  '999999999',
  '999999999999999',
  '99999999999999999999999999999999',
]

// ---------------------------------------------------------------------------------------
// Fields

/** Well-formed Structured Field items that are no reset: a string, a boolean, a token, a negative, bytes. */
const SF_NOT_A_RESET = ['"5"', '?1', 'abc', '-5', ':AAA=:', '*']
/** Not Structured Field syntax at all: the whole field is malformed. */
const SF_BROKEN = ['5.1234', '1e3', '1234567890123456', '', '5;', '"5', '5"', '0x10', '+5', '.5', '1.', '\u00b9']

type ValueKind = 'seconds' | 'milliseconds' | 'magnitude' | 'duration' | 'retry-after' | 'reset' | 'rfc3339' | 'sf-number'

/** A well-formed value of a kind, with the wait it says for this clock. */
function validValue(kind: ValueKind, at: Clock): fc.Arbitrary<Told> {
  const told = (text: fc.Arbitrary<string>, wait: (text: string) => number | undefined): fc.Arbitrary<Told> =>
    text.map((value) => ({ text: value, waitMs: wait(value.trim()), valid: true }))
  const dateOf = (ms: number): fc.Arbitrary<string> => fc.constantFrom<DateForm>('imf', 'rfc850', 'asctime').map((form) => httpDate(ms, form, at.now))
  // A numeric reset: delay seconds, or the moment as epoch seconds (maybe with a fraction) or epoch ms.
  const magnitudeText: fc.Arbitrary<string> = fc.oneof(
    delayMs.chain(secondsText),
    moment(at).filter((ms) => ms >= 0).chain((ms) => fc.constantFrom(String(ms), seconds(ms), String(Math.floor(ms / 1000)))),
  )
  switch (kind) {
    case 'seconds':
      return delayMs.chain((ms) => told(withOws(secondsText(ms)), () => delayWait(ms)))
    case 'milliseconds':
      return delayMs.chain((ms) => told(withOws(fc.constantFrom(String(ms), `${ms}.5`)), (text) => delayWait(Number(text))))
    case 'magnitude':
      return told(withOws(magnitudeText), (text) => magnitudeWait(Number(text), at))
    case 'duration':
      return delayMs.chain((ms) => told(withOws(durationText(ms)), () => delayWait(ms)))
    case 'retry-after':
      return fc.oneof(
        delayMs.chain((ms) => told(withOws(secondsText(ms)), () => delayWait(ms))),
        moment(at).map(wholeSecond).chain((ms) => told(withOws(dateOf(ms)), () => momentWait(ms, at))),
      )
    case 'reset':
      return fc.oneof(
        told(withOws(magnitudeText), (text) => magnitudeWait(Number(text), at)),
        moment(at).map(wholeSecond).chain((ms) => told(withOws(dateOf(ms)), () => momentWait(ms, at))),
      )
    case 'rfc3339':
      return moment(at).chain((ms) => told(withOws(rfc3339Text(ms)), () => momentWait(ms, at)))
    case 'sf-number':
      // An RFC 8941 Integer (at most 15 digits) or Decimal (12 + 3), read by magnitude.
      return magnitudeText
        .map((text) => (/^\d{1,12}(\.\d{1,3})?$|^\d{1,15}$/.test(text) ? text : String(Math.floor(Number(text)))))
        .chain((text) => told(fc.constant(text), () => magnitudeWait(Number(text), at)))
  }
}

/** A value of a kind spoiled into one its reader must ignore. */
function malformedValue(kind: ValueKind, at: Clock): fc.Arbitrary<Told> {
  if (kind === 'sf-number') {
    return fc.oneof(
      fc.constantFrom(...SF_NOT_A_RESET).map((text) => ({ text, waitMs: undefined, valid: false })),
      fc.constantFrom(...SF_BROKEN).map((text) => ({ text, waitMs: undefined, valid: false, breaksField: true })),
    )
  }
  const spoiled: fc.Arbitrary<string> = fc.oneof(
    fc.constantFrom(...MALFORMED),
    validValue(kind === 'rfc3339' ? 'seconds' : kind, at)
      .map((told) => told.text.trim())
      // A Go duration may have a sign and a leading dot, and a Retry-After date a comma: spoil by prefix and suffix only.
      .chain((text) => (kind === 'duration' || kind === 'retry-after' || kind === 'reset' ? fc.constantFrom(`-${text}`, `${text}x`, `"${text}"`, `${text};`, `(${text}`) : spoiledNumber(text))),
  )
  return spoiled.map((text) => ({ text, waitMs: undefined, valid: false }))
}

function value(kind: ValueKind, at: Clock): fc.Arbitrary<Told> {
  return fc.oneof({ weight: 2, arbitrary: validValue(kind, at) }, { weight: 1, arbitrary: malformedValue(kind, at) })
}

interface Count {
  text: string
  value: number | undefined
  /** Not Structured Field syntax: the whole field is malformed. */
  breaksField?: boolean
}

/** A count: mostly plausible, sometimes spoiled (then no limit of that dialect is read at all). */
const count: fc.Arbitrary<Count> = fc.oneof(
  { weight: 4, arbitrary: fc.nat(20).map((n) => ({ text: String(n), value: n })) },
  { weight: 1, arbitrary: fc.nat(20).chain((n) => spoiledNumber(String(n))).map((text) => ({ text, value: undefined })) },
)

/** A count inside a Structured Field: an Integer, or an item that is no count, or broken syntax. */
const sfCount: fc.Arbitrary<Count> = fc.oneof(
  { weight: 4, arbitrary: fc.nat(20).map((n) => ({ text: String(n), value: n })) },
  { weight: 1, arbitrary: fc.constantFrom(...SF_NOT_A_RESET).map((text) => ({ text, value: undefined })) },
  { weight: 1, arbitrary: fc.constantFrom(...SF_BROKEN).map((text) => ({ text, value: undefined, breaksField: true })) },
)

/** One header family as sent: its fields and what its time value says. */
interface Piece {
  label: string
  pairs: Pairs
  /** The retry time or reset time the reader must take from the piece alone (undefined when none). */
  told: Told
  /** Every wait any of its fields says (a bound when fields of several pieces are joined). */
  says: number[]
  /** A requests-unit remaining count it announces, when well formed. */
  remaining?: number
}

function saysOf(told: Told): number[] {
  return told.waitMs === undefined ? [] : [told.waitMs]
}

const RETRY_FIELDS: Array<[string, ValueKind]> = [
  ['retry-after', 'retry-after'],
  ['retry-after-ms', 'milliseconds'],
  ['x-amz-retry-after', 'milliseconds'],
  ['x-ratelimit-retry-after', 'magnitude'],
  ['x-retry-in', 'duration'],
]

function retryPiece(at: Clock): fc.Arbitrary<Piece> {
  return fc
    .constantFrom(...RETRY_FIELDS)
    .chain(([name, kind]) => value(kind, at).map((told): Piece => ({ label: name, pairs: [[name, told.text]], told, says: saysOf(told) })))
}

type Dialect = (remaining: string, reset: string) => Pairs

const DIALECTS: Array<[label: string, kind: ValueKind, fields: Dialect]> = [
  ['github', 'reset', (r, t) => [['x-ratelimit-limit', '60'], ['x-ratelimit-remaining', r], ['x-ratelimit-reset', t], ['x-ratelimit-resource', 'core']]],
  ['twitter', 'reset', (r, t) => [['x-rate-limit-limit', '15'], ['x-rate-limit-remaining', r], ['x-rate-limit-reset', t]]],
  ['zalando / discord reset', 'reset', (r, t) => [['x-ratelimit-remaining', r], ['x-ratelimit-reset', t]]],
  ['ietf -06', 'magnitude', (r, t) => [['ratelimit-limit', '100'], ['ratelimit-remaining', r], ['ratelimit-reset', t]]],
  ['ietf -07', 'sf-number', (r, t) => [['ratelimit', `limit=100, remaining=${r}, reset=${t}`], ['ratelimit-policy', '100;w=60']]],
  ['ietf -08', 'sf-number', (r, t) => [['ratelimit', `"burst";r=${r};t=${t}`], ['ratelimit-policy', '"burst";q=100;w=60']]],
  ['beta ietf', 'sf-number', (r, t) => [['beta-ratelimit', `"b";r=${r};t=${t}`], ['beta-ratelimit-policy', '"b";q=10;w=1']]],
  ['ietf -10 renamed', 'sf-number', (r, t) => [['ratelimit', `"a";a=${r};w=${t}`]]],
  ['openai', 'duration', (r, t) => [['x-ratelimit-limit-requests', '500'], ['x-ratelimit-remaining-requests', r], ['x-ratelimit-reset-requests', t]]],
  ['anthropic', 'rfc3339', (r, t) => [['anthropic-ratelimit-requests-limit', '50'], ['anthropic-ratelimit-requests-remaining', r], ['anthropic-ratelimit-requests-reset', t]]],
]

function resetPiece(at: Clock, dialects = DIALECTS): fc.Arbitrary<Piece> {
  return fc.constantFrom(...dialects).chain(([label, kind, fields]) =>
    fc.tuple(kind === 'sf-number' ? sfCount : count, value(kind, at)).map(([remaining, told]): Piece => {
      // A broken member breaks the whole Structured Field; a spoiled count elsewhere ends the dialect.
      const counted = remaining.value !== undefined && told.breaksField !== true
      const effective = counted ? told : { ...told, waitMs: undefined }
      return { label, pairs: fields(remaining.text, told.text), told: effective, says: saysOf(told), remaining: counted ? remaining.value : undefined }
    }),
  )
}

/** Discord: Reset-After (a delay) is preferred over Reset; a malformed Reset-After falls back to Reset. */
function discordPiece(at: Clock): fc.Arbitrary<Piece> {
  return fc.tuple(fc.nat(5), value('seconds', at), value('reset', at)).map(([remaining, after, reset]): Piece => ({
    label: 'discord',
    pairs: [['x-ratelimit-limit', '5'], ['x-ratelimit-remaining', String(remaining)], ['x-ratelimit-reset-after', after.text], ['x-ratelimit-reset', reset.text], ['x-ratelimit-bucket', 'abcd1234']],
    told: after.valid ? after : reset,
    says: [...saysOf(after), ...saysOf(reset)],
    remaining,
  }))
}

// ---------------------------------------------------------------------------------------
// Header sources

type SourceKind = 'headers' | 'get' | 'map'

/**
 * The fields as one of three sources: a WHATWG Headers (joins repeated fields with ", ",
 * strips OWS, refuses non-Latin-1), a bare `get` source and an enumerable Map (both raw).
 * Returns undefined when Headers refused a value (that field would never reach a reader).
 */
function sourceOf(kind: SourceKind, pairs: Pairs): HeaderSource | undefined {
  if (kind === 'headers') {
    const headers = new Headers()
    try {
      for (const [name, value] of pairs) headers.append(name, value)
    } catch {
      return undefined
    }
    return headers
  }
  const joined = new Map<string, string>()
  for (const [name, value] of pairs) joined.set(name, joined.has(name) ? `${joined.get(name)}, ${value}` : value)
  // A Map is enumerable (forEach), so the reader walks it rather than calling its get.
  return kind === 'map' ? (joined as unknown as HeaderSource) : { get: (name) => joined.get(name) ?? null }
}

const sourceKind = fc.constantFrom<SourceKind>('headers', 'get', 'map')

function datePairs(at: Clock): Pairs {
  return at.date === undefined ? [] : [['date', at.date]]
}

function waitOf(moment: number | undefined, now: number): number | undefined {
  return moment === undefined ? undefined : moment - now
}

function expectWait(actual: number | undefined, expected: number | undefined, context: string): void {
  if (expected === undefined) {
    expect(actual, context).toBeUndefined()
    return
  }
  expect(actual, context).toBeDefined()
  expect(Math.abs((actual as number) - expected), `${context}: got ${actual}, header says ${expected}`).toBeLessThanOrEqual(FLOAT_SLACK_MS)
}

function describeCase(status: number, at: Clock, pairs: Pairs): string {
  const shown = pairs.map(([name, value]) => `${name}: ${value.length > 80 ? `${value.slice(0, 40)}…(${value.length} chars)` : JSON.stringify(value)}`)
  return `status ${status}, now ${at.now} (${new Date(at.now).toISOString()}), ${shown.join('; ')}`
}

/**
 * fc.assert, reporting only the seed, the path and the first failure's own message: the
 * counterexamples hold 100 KB values, which fast-check would print in full.
 */
function check<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => void, parameters: { seed: number; numRuns: number }): void {
  const details = fc.check(fc.property(arbitrary, predicate), { ...parameters, endOnFailure: true })
  if (!details.failed) return
  const error = details.errorInstance
  const message = error instanceof Error ? error.message : String(error)
  throw new Error(`property failed (seed ${details.seed}, path "${details.counterexamplePath}", run ${details.numRuns}):\n${message.slice(0, 4000)}`)
}

// ---------------------------------------------------------------------------------------

describe('readSignals fuzz: each retry field on its own says exactly its wait, or nothing', () => {
  it('Retry-After, retry-after-ms, x-amz-retry-after, X-RateLimit-Retry-After and X-Retry-In (3,000 cases)', () => {
    let waits = 0
    let ignored = 0
    check(
      clock.chain((at) => fc.tuple(fc.constant(at), retryPiece(at), fc.constantFrom(429, 503, 529, 403), sourceKind)),
      ([at, piece, status, kind]) => {
        const pairs = [...piece.pairs, ...datePairs(at)]
        const source = sourceOf(kind, pairs)
        if (source === undefined) return
        const signal = readSignals(status, source, at.now)
        const context = describeCase(status, at, pairs)
        expectWait(waitOf(signal.retryAt, at.now), piece.told.waitMs, context)
        // 403 is congestion only with the retry time; the rest say so by their status.
        expect(signal.kind, context).toBe(status === 403 ? (piece.told.waitMs === undefined ? 'ok' : 'throttled') : status === 429 ? 'throttled' : 'overloaded')
        if (piece.told.waitMs === undefined) ignored++
        else waits++
      },
      { seed: SEED, numRuns: 3000 },
    )
    expect(waits).toBeGreaterThan(1000)
    expect(ignored).toBeGreaterThan(700)
  })
})

describe('readSignals fuzz: each dialect reports the reset it was told, or none', () => {
  it('X-RateLimit-*, x-rate-limit-*, RateLimit (-06, -07, -08+, beta, renamed), OpenAI and Anthropic (3,000 cases)', () => {
    let resets = 0
    check(
      clock.chain((at) => fc.tuple(fc.constant(at), fc.oneof(resetPiece(at), discordPiece(at)), fc.constantFrom(200, 429, 503, 403), sourceKind)),
      ([at, piece, status, kind]) => {
        const pairs = [...piece.pairs, ...datePairs(at)]
        const source = sourceOf(kind, pairs)
        if (source === undefined) return
        const signal = readSignals(status, source, at.now)
        const context = describeCase(status, at, pairs)
        expect(signal.remaining, context).toBe(piece.remaining)
        expectWait(waitOf(signal.resetAt, at.now), piece.remaining === undefined ? undefined : piece.told.waitMs, context)
        // An exhausted limit's reset gates a 429 (and makes a 403 one); nothing else does.
        const gates = (status === 429 || status === 403) && piece.remaining === 0
        expectWait(waitOf(signal.retryAt, at.now), gates ? piece.told.waitMs : undefined, `${context} (retryAt)`)
        if (signal.resetAt !== undefined) resets++
      },
      { seed: SEED + 1, numRuns: 3000 },
    )
    expect(resets).toBeGreaterThan(1000)
  })
})

describe('readSignals fuzz: mixed, repeated and spoiled fields', () => {
  const piece = (at: Clock): fc.Arbitrary<Piece> => fc.oneof(retryPiece(at), resetPiece(at), discordPiece(at))
  const junk: fc.Arbitrary<Pairs> = fc
    .tuple(fc.constantFrom(...SIGNAL_HEADER_NAMES, 'ratelimit-reset', 'ratelimit-limit', 'x-ratelimit-reset', 'x-ratelimit-reset-after', 'x-rate-limit-reset', 'x-ratelimit-reset-requests', 'anthropic-ratelimit-requests-reset'), fc.constantFrom(...MALFORMED))
    .map(([name, text]) => [[name, text]])

  it('never waits longer than the longest wait any field says, and not at all when none says one (2,000 cases)', () => {
    let withTimes = 0
    check(
      clock.chain((at) => fc.tuple(fc.constant(at), fc.array(piece(at), { minLength: 1, maxLength: 5 }), fc.array(junk, { maxLength: 4 }), fc.constantFrom(200, 403, 429, 503), sourceKind)),
      ([at, pieces, junkFields, status, kind]) => {
        // Repeated fields (two pieces of one family, or junk on a real field) arrive joined with ", ".
        const pairs: Pairs = [...pieces.flatMap((p) => p.pairs), ...junkFields.flat(), ...datePairs(at)]
        const source = sourceOf(kind, pairs)
        if (source === undefined) return
        let signal: Signal | undefined
        expect(() => (signal = readSignals(status, source, at.now))).not.toThrow()
        const context = describeCase(status, at, pairs)
        const said = pieces.flatMap((p) => p.says)
        const longest = said.length === 0 ? undefined : Math.max(...said)
        for (const [label, moment] of [['retryAt', signal?.retryAt], ['resetAt', signal?.resetAt]] as const) {
          if (moment === undefined) continue
          withTimes++
          const wait = moment - at.now
          expect(longest, `${context}: ${label} ${wait} ms said by no field`).toBeDefined()
          expect(wait, `${context}: ${label}`).toBeGreaterThanOrEqual(0)
          expect(wait, `${context}: ${label} beyond every field`).toBeLessThanOrEqual((longest as number) + FLOAT_SLACK_MS)
        }
        // A count is one a field announced, never a guess.
        if (signal?.remaining !== undefined) {
          const announced = pieces.map((p) => p.remaining)
          expect(announced, `${context}: remaining ${signal.remaining}`).toContain(signal.remaining)
        }
      },
      { seed: SEED + 2, numRuns: 2000 },
    )
    expect(withTimes).toBeGreaterThan(500)
  })
})

describe('readSignals fuzz: a catalogue of hostile values in every time field', () => {
  /** Each time-bearing field, with what makes its value count (an exhausted limit on a 429). */
  const TIME_FIELDS: Array<[label: string, fields: (value: string) => Pairs]> = [
    ...RETRY_FIELDS.map(([name]): [string, (value: string) => Pairs] => [name, (value) => [[name, value]]]),
    ['x-ratelimit-reset', (value) => [['x-ratelimit-remaining', '0'], ['x-ratelimit-reset', value]]],
    ['x-ratelimit-reset-after', (value) => [['x-ratelimit-remaining', '0'], ['x-ratelimit-reset-after', value]]],
    ['x-rate-limit-reset', (value) => [['x-rate-limit-remaining', '0'], ['x-rate-limit-reset', value]]],
    ['ratelimit-reset', (value) => [['ratelimit-remaining', '0'], ['ratelimit-reset', value]]],
    ['ratelimit reset=', (value) => [['ratelimit', `limit=5, remaining=0, reset=${value}`]]],
    ['ratelimit ;t=', (value) => [['ratelimit', `"p";r=0;t=${value}`]]],
    ['x-ratelimit-reset-requests', (value) => [['x-ratelimit-remaining-requests', '0'], ['x-ratelimit-reset-requests', value]]],
    ['anthropic-ratelimit-requests-reset', (value) => [['anthropic-ratelimit-requests-remaining', '0'], ['anthropic-ratelimit-requests-reset', value]]],
  ]

  function readAll(pairs: Pairs, now = NOW): Signal[] {
    const signals: Signal[] = []
    for (const kind of ['headers', 'get', 'map'] as const) {
      const source = sourceOf(kind, pairs)
      if (source !== undefined) signals.push(readSignals(429, source, now))
    }
    return signals
  }

  /** Inside a Structured Field, "-0" is a well-formed Integer (zero) and "120;w=1" an Integer with a parameter. */
  const malformedFor = (label: string): readonly string[] =>
    label.startsWith('ratelimit ') ? MALFORMED.filter((text) => text !== '-0' && text !== '120;w=1') : MALFORMED

  it.each(TIME_FIELDS)('%s: malformed values give no time, and never throw', (label, fields) => {
    for (const text of malformedFor(label)) {
      for (const signal of readAll(fields(text))) {
        expect(signal.retryAt, `${label}: ${JSON.stringify(text.slice(0, 60))}`).toBeUndefined()
        expect(signal.resetAt, `${label}: ${JSON.stringify(text.slice(0, 60))}`).toBeUndefined()
        expect(signal.kind).toBe('throttled')
      }
    }
  })

  it('all malformed at once, with a malformed Date, give no time', () => {
    for (const text of MALFORMED) {
      const pairs: Pairs = [...TIME_FIELDS.filter(([label]) => malformedFor(label).includes(text)).flatMap(([, fields]) => fields(text)), ['date', text]]
      for (const signal of readAll(pairs)) {
        expect(signal.retryAt).toBeUndefined()
        expect(signal.resetAt).toBeUndefined()
      }
    }
  })

  it('moments in the past (years 1 to 2025) mean now; too far ahead means nothing', () => {
    const retry = (label: string): boolean => RETRY_FIELDS.some(([name]) => name === label)
    /** The fields that take an HTTP-date, and those that take an epoch (by magnitude). */
    const DATABLE = ['retry-after', 'x-ratelimit-reset', 'x-rate-limit-reset']
    const EPOCH = ['x-ratelimit-retry-after', 'x-ratelimit-reset', 'x-rate-limit-reset', 'ratelimit-reset', 'ratelimit reset=', 'ratelimit ;t=']
    let checked = 0
    for (const [label, fields] of TIME_FIELDS) {
      // A count of milliseconds under a year is a wait, not a far moment.
      const milliseconds = label === 'retry-after-ms' || label === 'x-amz-retry-after'
      const cases: Array<[string, 0 | undefined]> = FAR_FUTURE.filter((text) => !milliseconds || !(Number(text) <= MAX_HORIZON_MS)).map((text) => [text, undefined])
      for (const text of PAST) {
        const epoch = /^\d+$/.test(text)
        if (epoch ? EPOCH.includes(label) : DATABLE.includes(label)) cases.push([text, 0])
      }
      if (label === 'anthropic-ratelimit-requests-reset') cases.push(['0001-01-01T00:00:00Z', 0], ['1994-11-06T08:49:37Z', 0], ['9999-12-31T23:59:59Z', undefined])
      for (const [text, expected] of cases) {
        for (const signal of readAll(fields(text))) {
          checked++
          expectWait(waitOf(retry(label) ? signal.retryAt : signal.resetAt, NOW), expected, `${label}: ${text}`)
          if (!retry(label)) expectWait(waitOf(signal.retryAt, NOW), expected, `${label}: ${text} (retryAt of an exhausted limit)`)
        }
      }
    }
    expect(checked).toBeGreaterThan(300)
  })

  it('a year below 100 is that year, not 19xx, even to a clock set in the 1900s', () => {
    // Date.UTC reads years 0–99 as 1900–1999: "31 Dec 0099" would be 1999-12-31, a wait of
    // most of a year to a client whose clock says 1999-01-01, for a date 1,900 years past.
    const now = Date.UTC(1999, 0, 1)
    for (const text of ['Thu, 31 Dec 0099 23:59:59 GMT', 'Thu Dec 31 23:59:59 0099']) {
      expect(readSignals(429, new Headers({ 'retry-after': text }), now).retryAt).toBe(now)
    }
    expect(readSignals(429, new Headers({ 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': '0099-12-31T23:59:59Z' }), now).resetAt).toBe(now)
    expect(parseHttpDate('Mon, 01 Jan 0001 00:00:00 GMT', NOW)).toBe(YEAR_1)
    expect(parseRfc3339('0001-01-01T00:00:00Z')).toBe(YEAR_1)
  })
})

describe('readSignals fuzz: bounded work', () => {
  it('reads a bounded number of fields per response, however many and however long they are', () => {
    // The operation count: lookups on a bare `get` source. Every field at 100 KB (ignored: over
    // MAX_FIELD_LENGTH) and every field at a parseable 4 KB: the same handful of lookups.
    const names = [...SIGNAL_HEADER_NAMES, 'date', 'ratelimit-limit', 'ratelimit-reset', 'ratelimit-name', 'x-ratelimit-reset', 'x-ratelimit-limit', 'x-ratelimit-reset-after', 'x-ratelimit-resource', 'x-ratelimit-bucket', 'x-rate-limit-reset', 'x-rate-limit-limit', 'x-ratelimit-reset-requests', 'x-ratelimit-limit-requests', 'anthropic-ratelimit-requests-reset', 'anthropic-ratelimit-requests-limit']
    const maxLookups = 3 * names.length
    for (const unit of ['1', 'a, ', '(a ', 'a;b', 'a=1, ', '"a', ',', 'r=1;', '"x";r=0;t=5, ', '1m', ' ']) {
      for (const length of [HUGE, 4096]) {
        const text = unit.repeat(Math.ceil(length / unit.length)).slice(0, length)
        let lookups = 0
        const source: HeaderSource = {
          get: (name) => {
            lookups++
            return names.includes(name) ? text : null
          },
        }
        const signal = readSignals(429, source, NOW)
        expect(signal.kind).toBe('throttled')
        expect(lookups, `${JSON.stringify(unit)} × ${length}`).toBeLessThanOrEqual(maxLookups)
      }
    }
  })

  it('every parser finishes on 100 KB adversarial inputs and rejects them (no catastrophic backtracking)', () => {
    // One run each; vitest's test timeout is the generous bound. Timing lives outside the suite.
    const inputs = ['1'.repeat(HUGE) + 'x', '1.'.repeat(HUGE / 2), '1m'.repeat(HUGE / 2) + 'x', '"' + '\\"'.repeat(HUGE / 2), '(' + 'a '.repeat(HUGE / 2), 'a' + ';b'.repeat(HUGE / 2) + ',', 'a, '.repeat(HUGE / 3) + ',', 'a=1, '.repeat(HUGE / 5) + '=', ' '.repeat(HUGE) + 'x,', 'Sun, 06 Nov 1994 ' + '0'.repeat(HUGE), '2025-09-23T12:00:00.' + '1'.repeat(HUGE) + 'x']
    for (const input of inputs) {
      expect(parseNonNegativeDecimal(input)).toBeUndefined()
      expect(parseDurationMs(input)).toBeUndefined()
      expect(parseHttpDate(input, NOW)).toBeUndefined()
      expect(parseRfc3339(input)).toBeUndefined()
      expect(parseSfList(input)).toBeUndefined()
      expect(parseSfDictionary(input)).toBeUndefined()
    }
  })

  it('survives a hostile source: values of any type, and names it never asked for (1,000 cases)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...SIGNAL_HEADER_NAMES, 'date', 'x-ratelimit-reset', 'ratelimit-reset'), fc.anything(), { maxKeys: 10 }), fc.constantFrom(200, 403, 429, 503), (record, status) => {
        const source = { get: (name: string) => (Object.hasOwn(record, name) ? record[name] : null) } as HeaderSource
        const signal = readSignals(status, source, NOW)
        for (const moment of [signal.retryAt, signal.resetAt]) {
          if (moment !== undefined) expect(Number.isFinite(moment) && moment >= NOW).toBe(true)
        }
      }),
      { seed: SEED + 3, numRuns: 1000 },
    )
  })
})
