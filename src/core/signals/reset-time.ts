// Turning the server's notion of "when" into a moment on the client's clock.
//
// Rules (docs/signals.md repeats them):
// - A delay (delta) is added to `now`. A negative delay is malformed and ignored.
// - An absolute moment (epoch value, HTTP-date, RFC 3339) is measured against the
//   response's own `Date` header when there is one, so a server whose clock is off
//   does not shift our wait: at = now + (moment − serverDate). The `Date` has whole
//   seconds (the server's time truncated) and was written before the answer travelled:
//   when it names the second our clock is in, or the one before (the answer crossed a
//   second's boundary on its way), the clocks agree as far as it can tell, and the
//   moment is taken as it is (correcting by the truncation would put an agreeing
//   server's moments up to a second late, two when the answer crossed a boundary).
//   Without a usable `Date`, the moment is taken as it is on our clock.
// - A moment already past clamps to `now` (the server's "from then on" has come).
// - Anything more than a year ahead is absurd (a confused unit, a delta read as an
//   epoch) and ignored rather than obeyed.
import { readField, type HeaderSource } from './header-source.js'
import { parseHttpDate } from './http-date.js'

export const MAX_HORIZON_MS = 365 * 24 * 60 * 60 * 1000

/** Numeric reset values at or above this are epoch seconds (2001-09-09), not a delay. */
export const EPOCH_SECONDS_THRESHOLD = 1e9
/** … and at or above this they are epoch milliseconds (2001-09-09 in ms). */
export const EPOCH_MS_THRESHOLD = 1e12

/**
 * The client's `now` plus the server's `Date`, read lazily: most responses with
 * rate-limit headers carry delays only, and never need the Date parsed.
 */
export class TimeBase {
  readonly now: number
  readonly #headers: HeaderSource
  #serverDate: number | undefined | null = null

  constructor(now: number, headers: HeaderSource) {
    this.now = now
    this.#headers = headers
  }

  /** Epoch ms of the response's `Date` header; undefined when absent, malformed or absurd. */
  #serverDateMs(): number | undefined {
    if (this.#serverDate === null) {
      const field = readField(this.#headers, 'date')
      const parsed = field === undefined ? undefined : parseHttpDate(field, this.now)
      // A Date more than a year off our clock is a broken clock or a broken
      // header; correcting by it would throw every epoch value out of range.
      this.#serverDate = parsed !== undefined && Math.abs(parsed - this.now) <= MAX_HORIZON_MS ? parsed : undefined
    }
    return this.#serverDate
  }

  /** `now + delayMs`, or undefined for a negative, non-finite or absurd delay. */
  afterDelay(delayMs: number): number | undefined {
    if (!(delayMs >= 0) || delayMs > MAX_HORIZON_MS) return undefined
    return within(this.now + delayMs, this.now)
  }

  /** An absolute epoch-ms moment from the server, on our clock (see the rules above). */
  atMoment(epochMs: number): number | undefined {
    if (!Number.isFinite(epochMs)) return undefined
    const serverDate = this.#serverDateMs()
    const local = serverDate === undefined ? epochMs : epochMs - skewMs(serverDate, this.now)
    if (local - this.now > MAX_HORIZON_MS) return undefined
    return within(Math.max(local, this.now), this.now)
  }

  /**
   * A numeric reset whose unit the header does not pin down (`X-RateLimit-Reset` is
   * epoch seconds at GitHub, a delay at Zalando): epoch ms from 1e12, epoch seconds
   * from 1e9, otherwise delay seconds. No real delay is anywhere near 1e9 s (31 years).
   */
  atReset(value: number): number | undefined {
    if (!(value >= 0)) return undefined
    if (value >= EPOCH_MS_THRESHOLD) return this.atMoment(value)
    if (value >= EPOCH_SECONDS_THRESHOLD) return this.atMoment(value * 1000)
    return this.afterDelay(value * 1000)
  }
}

/** The `Date` header's resolution: it names the second the server's clock was in. */
const DATE_RESOLUTION_MS = 1000

/** The server clock's lead over ours as its `Date` tells it: none when it names our second or the one before. */
function skewMs(date: number, now: number): number {
  return date <= now && now < date + 2 * DATE_RESOLUTION_MS ? 0 : date - now
}

function within(at: number, now: number): number | undefined {
  return Number.isFinite(at) && at >= now ? at : undefined
}
