// How many reports one client may start, client-wide: a token bucket on the driver's
// clock. The endpoint refuses (429 `rate_limited`) a client id's reports beyond 2 per
// second, burst 10, by default; a client whose lanes all came due in one tick sent them
// all at once, and with 30 lanes the same 10 were answered every window and the other 20
// never. Staying inside the endpoint's budget, oldest due first, reaches every lane.
export interface ReportBudgetOptions {
  /** Reports a second, sustained. */
  perSecond: number
  /** Reports at once. */
  burst: number
}

export interface ReportBudget {
  /** Whole reports that may start at `now` (epoch ms). */
  available(now: number): number
  /** Take one report's token at `now`; false when there is none left. */
  take(now: number): boolean
}

export function createReportBudget(options: ReportBudgetOptions): ReportBudget {
  const { perSecond, burst } = options
  let tokens = burst
  let at: number | undefined
  function refill(now: number): void {
    // A clock set back refills nothing (and never drains); one set ahead refills at most the burst.
    if (at !== undefined) tokens = Math.min(burst, tokens + (Math.max(0, now - at) * perSecond) / 1000)
    at = now
  }
  return {
    available(now) {
      refill(now)
      return Math.floor(tokens)
    },
    take(now) {
      refill(now)
      if (tokens < 1) return false
      tokens -= 1
      return true
    },
  }
}
