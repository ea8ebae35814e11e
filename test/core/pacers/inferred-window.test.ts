import { describe, expect, it } from 'vitest'
import { inferWindow, nextBoundaryAt, type WindowEvidence } from '../../../src/core/pacers/inferred-window.js'

const T0 = 1_700_000_000_000

/**
 * Feeds hints [at, remaining, limit, resetAt, sent] (times relative to T0, × k; `sent`: units the
 * lane sent since the hint before, 1 unless given) and returns the last answer.
 */
function feed(hints: Array<[number, number, number | undefined, number | undefined, number?]>, k = 1, evidence: WindowEvidence = {}) {
  let result: ReturnType<typeof inferWindow>
  for (const [at, remaining, limit, resetAt, sent] of hints) {
    result = inferWindow(evidence, T0 + at * k, remaining, limit, resetAt === undefined ? undefined : T0 + resetAt * k, sent ?? 1)
  }
  return { result: result!, evidence }
}

// A fixed window of 3 per 1 s, its boundaries at 1000, 2000, …: the reset stays put within a window.
const FIXED_FIRST_WINDOW: Array<[number, number, number, number]> = [
  [0, 2, 3, 1000],
  [2, 1, 3, 1000],
  [3, 0, 3, 1000],
]

describe('inferWindow: a quota refilled at a boundary', () => {
  it('is told by the reset staying put while remaining falls, but gives no window within one window', () => {
    const { result, evidence } = feed(FIXED_FIRST_WINDOW)
    expect(evidence.model).toBe('boundary')
    expect(result).toBeUndefined()
  })

  it('gives the window when a reset has passed and the next answer announces the next one', () => {
    const { result } = feed([...FIXED_FIRST_WINDOW, [1010, 2, 3, 2000]])
    expect(result).toEqual({ quota: 3, windowMs: 1000, model: 'boundary' })
  })

  it('keeps the smallest distance: a window that began at the first send after an idle spell reads long once, then right', () => {
    // GitHub-style windows from first use: idle 500 ms after the reset at 1000, so the next ends at 2500.
    const { result } = feed([...FIXED_FIRST_WINDOW, [1500, 2, 3, 2500], [1501, 1, 3, 2500], [2500, 2, 3, 3500]])
    expect(result?.windowMs).toBe(1000)
    const { result: once } = feed([...FIXED_FIRST_WINDOW, [1500, 2, 3, 2500]])
    expect(once?.windowMs).toBe(1500) // never shorter than the real window
  })

  it('a reset that brought back less than the limit (a bucket refilled in steps) gives no window', () => {
    // 3 units, one step of 1 each second: after the reset 1 is left before the probe, 0 after it.
    const { result, evidence } = feed([...FIXED_FIRST_WINDOW, [1010, 0, 3, 2000], [2010, 0, 3, 3000]])
    expect(evidence.model).toBe('boundary')
    expect(result).toBeUndefined()
    // The same answer after the lane sent 3 since its last hint: all 3 may be the new window's.
    expect(feed([...FIXED_FIRST_WINDOW, [1010, 0, 3, 2000, 3]]).result?.windowMs).toBe(1000)
  })

  it('answers to sends made before the reset (their reset already past) are no evidence', () => {
    const { result, evidence } = feed([...FIXED_FIRST_WINDOW, [1000, 0, 3, 1000], [1010, 2, 3, 2000]])
    expect(evidence.last?.resetAt).toBe(T0 + 2000)
    expect(result?.windowMs).toBe(1000)
  })
})

describe('inferWindow: a quota refilled continuously (reset = time until full)', () => {
  it('is told by the reset moving on by each unit’s refill time, and gives limit ÷ rate at once', () => {
    // 60 per minute: one unit a second; OpenAI's "x-ratelimit-reset-requests: 1s" after one request.
    const { result } = feed([
      [0, 59, 60, 1000],
      [10, 58, 60, 2010],
      [20, 57, 60, 3020],
    ])
    expect(result).toEqual({ quota: 60, windowMs: 60_000, model: 'continuous' })
  })

  it('reads the rate through refills between the hints', () => {
    // 10 units, 2 a second back (500 ms each): 4 missing at 0; by 500 one came back and 3 more were spent.
    const { result } = feed([
      [0, 6, 10, 2000],
      [500, 4, 10, 3500],
    ])
    expect(result).toEqual({ quota: 10, windowMs: 5000, model: 'continuous' })
  })
})

describe('inferWindow: malformed or contradictory hints are no evidence', () => {
  it.each<[string, number, number | undefined, number | undefined]>([
    ['no limit', 1, undefined, 2000],
    ['limit 0', 0, 0, 2000],
    ['negative limit', 1, -3, 2000],
    ['limit NaN', 1, Number.NaN, 2000],
    ['limit Infinity', 1, Number.POSITIVE_INFINITY, 2000],
    ['remaining above the limit', 5, 3, 2000],
    ['no reset', 2, 3, undefined],
    ['a reset already past', 2, 3, 900],
  ])('%s', (_label, remaining, limit, resetAt) => {
    const { result, evidence } = feed([...FIXED_FIRST_WINDOW, [1010, remaining, limit, resetAt]])
    expect(result).toBeUndefined()
    // What was learned is kept: a proper answer after it still gives the window.
    expect(evidence.model).toBe('boundary')
    expect(feed([[1020, 1, 3, 2000, 2]], 1, evidence).result?.windowMs).toBe(1000)
  })

  it('a changed limit is another quota: what was learned of the old one is dropped', () => {
    const { evidence } = feed([...FIXED_FIRST_WINDOW, [1010, 2, 3, 2000]])
    const { result } = feed([[1020, 9, 10, 2000]], 1, evidence)
    expect(result).toBeUndefined()
    expect(evidence.model).toBeUndefined()
  })

  it('a hint older than the last one is no evidence', () => {
    const { result, evidence } = feed([...FIXED_FIRST_WINDOW, [1010, 2, 3, 2000], [5, 2, 3, 1500]])
    expect(result?.windowMs).toBe(1000)
    expect(evidence.model).toBe('boundary')
  })

  it('a single hint, or a count that does not fall, tells nothing', () => {
    expect(feed([[0, 2, 3, 1000]]).result).toBeUndefined()
    expect(feed([[0, 0, 3, 1000], [5, 0, 3, 1000], [9, 0, 3, 1000]]).evidence.model).toBeUndefined()
  })
})

describe('inferWindow: scale-free', () => {
  const cases: Array<[string, Array<[number, number, number, number]>]> = [
    ['fixed window', [...FIXED_FIRST_WINDOW, [1010, 2, 3, 2000], [1500, 1, 3, 2000], [2003, 2, 3, 3000]]],
    ['token bucket', [[0, 59, 60, 1000], [10, 58, 60, 2010], [700, 58, 60, 2700]]],
    ['first-use windows', [...FIXED_FIRST_WINDOW, [1700, 2, 3, 2700], [2800, 2, 3, 3800]]],
  ]
  it.each(cases)('%s: every time × k gives the same model and the window × k', (_label, hints) => {
    const base = feed(hints).result
    expect(base).toBeDefined()
    for (const k of [0.01, 0.37, 3, 60, 3600]) {
      const scaled = feed(hints, k).result
      expect(scaled?.model).toBe(base?.model)
      expect(scaled?.quota).toBe(base?.quota)
      expect(scaled!.windowMs / k).toBeCloseTo(base!.windowMs, 6)
    }
  })
})

// Envoy's stepped bucket (100 units, 80 every 60 s, steps at 60, 120, …), X-RateLimit headers:
// the reset is the time to full, the next step while at most 80 are missing, the one after beyond.
const STEPPED: Array<[number, number, number, number, number?]> = [
  [12_000, 79, 100, 60_000], // 21 missing: full at the next step
  [90_000, 21, 100, 120_000, 58], // 79 missing (the first step refilled the bucket): full at the next step
  [92_000, 19, 100, 180_000, 2], // 81 missing: full two steps on, the reset jumped one step (60 s)
  [101_000, 9, 100, 180_000, 5], // the reset stays put while remaining falls
  [128_000, 75, 100, 180_000, 3], // the step at 120 s brought units back before the reset: 75 + 3 − 9 = 69 of its 80
]

describe('inferWindow: a bucket refilled in steps (its reset is its time to full)', () => {
  it('reads a reset that moved on by a whole step as a boundary, the step as the window and the units a step brought as the quota', () => {
    const { result, evidence } = feed(STEPPED)
    expect(evidence.model).toBe('boundary')
    expect(evidence.stepUnits).toBe(69)
    // Read before as continuous (the reset moved on 60 s where a bucket's would move 3 s), and
    // then, without a full refill, no window at all.
    expect(result).toEqual({ quota: 69, windowMs: 60_000, model: 'boundary' })
  })

  it('every time × k gives the same quota and the window × k (a step longer than the headers\' one-second resolution)', () => {
    for (const k of [0.1, 10, 100]) {
      const { result } = feed(STEPPED, k)
      expect(result?.quota).toBe(69)
      expect(result?.windowMs).toBeCloseTo(60_000 * k, 6)
    }
  })

  it('keeps a continuous bucket continuous: its reset moves by each spent unit\'s refill', () => {
    // 100 units at 80 per 60 s (0.75 s a unit): time to full = missing × 0.75 s.
    const { result, evidence } = feed([
      [0, 90, 100, 7.5 * 1000],
      [2000, 80, 100, 2000 + 15_000],
    ])
    expect(evidence.model).toBe('continuous')
    expect(result?.windowMs).toBeCloseTo(75_000, 0)
  })
})

describe('nextBoundaryAt: when a boundary quota gives units back', () => {
  it('is the reset when it is within one window (a fixed window), or without a window', () => {
    expect(nextBoundaryAt(T0 + 50_000, 60_000, T0)).toBe(T0 + 50_000)
    expect(nextBoundaryAt(T0 + 150_000, undefined, T0)).toBe(T0 + 150_000)
  })

  it('is the first step after the hint when the reset (time to full) lies whole steps beyond it', () => {
    // Empty at 112.6 s: full at 240 s, the next step at 120 s.
    expect(nextBoundaryAt(T0 + 240_000, 60_000, T0 + 112_600)).toBe(T0 + 120_000)
    expect(nextBoundaryAt(T0 + 300_000, 60_000, T0 + 189_800)).toBe(T0 + 240_000)
    // × k: the same step × k.
    expect(nextBoundaryAt(T0 + 240_000 * 60, 60_000 * 60, T0 + 112_600 * 60)).toBe(T0 + 120_000 * 60)
  })
})

// A sliding log of 100 per 75 s, X-RateLimit headers: its reset is the newest entry's expiry, one
// window after each admitted answer (whole seconds, rounded up), whatever is missing.
function logHints(k: number): Array<[number, number, number, number, number?]> {
  const reset = (at: number) => Math.ceil((T0 + at + 75_000 * k) / 1000) * 1000 - T0
  return [
    [0, 99, 100, reset(0)], // one missing: a bucket refilling a unit per 76 s would say the same
    [200 * k, 88, 100, reset(200 * k), 11], // 12 missing within the rounding: a fixed window just begun says the same
    [2_830 * k, 85, 100, reset(2_830 * k), 3], // the reset kept its distance: not a boundary, not a bucket
  ]
}
const LOG = logHints(1)

describe('inferWindow: a sliding log (its reset one window after each answer)', () => {
  it('is told once the reset kept its distance over seconds while the missing units grew; the distance is the window', () => {
    expect(feed(LOG.slice(0, 2)).evidence.model).toBe('boundary')
    const { result } = feed(LOG)
    expect(result).toMatchObject({ quota: 100, model: 'expiry' })
    // The largest distance seen: the window, rounded up to the header's second.
    expect(result!.windowMs).toBeGreaterThanOrEqual(75_000)
    expect(result!.windowMs).toBeLessThan(76_000)
  })

  it('stays told for the limit (a later pair that looks like a bucket does not flip it), and a new limit forgets it', () => {
    const { result } = feed([...LOG, [40_000, 10, 100, 115_500, 75], [41_000, 9, 100, 116_500]])
    expect(result?.model).toBe('expiry')
    expect(feed([...LOG, [42_000, 40, 50, 117_000]]).evidence.sliding).toBeUndefined()
  })

  it('every time × k gives the window × k, within the header\'s second', () => {
    for (const k of [10, 100]) {
      const windowMs = feed(logHints(k)).result?.windowMs as number
      expect(windowMs).toBeGreaterThanOrEqual(75_000 * k)
      expect(windowMs).toBeLessThan(75_000 * k + 1000)
    }
  })

  it('a short window is told once two seconds have passed (the rounding hides less), within half of it', () => {
    // 7.5 s: the third answer of logHints(0.1) came 0.28 s after the first, within the rounding.
    expect(feed(logHints(0.1)).result?.model).not.toBe('expiry')
    const reset = (at: number) => Math.ceil((T0 + at + 7_500) / 1000) * 1000 - T0
    const { result } = feed([[0, 99, 100, reset(0)], [2_500, 95, 100, reset(2_500), 4]])
    expect(result?.model).toBe('expiry')
    expect(result!.windowMs).toBeGreaterThanOrEqual(7_500)
    expect(result!.windowMs).toBeLessThan(8_500)
  })

  it('a reset that jumped (a counter\'s at its window\'s end) is not read as one, though it lands at the same distance', () => {
    // A sliding-window counter of 100 per 15 s: its full refill is its window's end plus a window.
    // Epoch-second resets: the first answer came 0.5 s into the second, its reset rounded up.
    const counter = feed([[0, 99, 100, 30_500], [7_000, 70, 100, 30_500, 29], [14_900, 40, 100, 30_500, 30], [15_100, 30, 100, 45_500, 10]])
    expect(counter.evidence.sliding).toBeUndefined()
  })

  it('a continuous bucket and a fixed window are not read as one', () => {
    // 100 units at 80 per 60 s: time to full = missing × 0.75 s, which doubles with the missing units.
    const bucket = feed([[0, 90, 100, 7_500], [2_500, 80, 100, 2_500 + 15_000], [3_000, 70, 100, 3_000 + 22_500]])
    expect(bucket.evidence.model).toBe('continuous')
    const fixed = feed([[0, 90, 100, 75_000], [3_000, 70, 100, 75_000], [30_000, 20, 100, 75_000]])
    expect(fixed.evidence.model).toBe('boundary')
  })
})

// A sliding-window counter of 100 per 75 s (windows at 0, 75, 150 s): its reset (full refill) is the
// current window's end plus one window, which jumps a window at each end, as a stepped bucket's
// time to full jumps a step; but the last window's count fades back between the ends.
describe('inferWindow: a sliding-window counter', () => {
  const FIRST: Array<[number, number, number, number, number?]> = [
    [60_000, 50, 100, 150_000],
    [74_000, 40, 100, 150_000, 10],
    [78_000, 30, 100, 225_000, 10], // the reset jumped a window: read as a step of 75 s
  ]
  it('units that come back between two ends fade back: a counter, whose quota is the limit', () => {
    expect(feed(FIRST).evidence.stepped).toBe(true)
    const { result } = feed([...FIRST, [100_000, 45, 100, 225_000, 1]])
    expect(result).toEqual({ quota: 100, windowMs: 75_000, model: 'fading' })
  })

  it('a refusal is no evidence of units coming back (its own attempt, counted as sent, took nothing)', () => {
    const read = (refused: boolean) => {
      const evidence: WindowEvidence = {}
      for (const [at, remaining, limit, resetAt, sent] of [...FIRST, [80_000, 0, 100, 225_000, 30]] as Array<[number, number, number, number, number?]>) {
        inferWindow(evidence, T0 + at, remaining, limit, T0 + resetAt, sent ?? 1)
      }
      inferWindow(evidence, T0 + 100_000, 0, 100, T0 + 225_000, 1, refused)
      return evidence.model
    }
    expect(read(true)).toBe('boundary')
    expect(read(false)).toBe('fading')
  })

  it('a full refill announced beyond the next step with no more missing than a step brings is a counter', () => {
    // Held until each end, a fleet never sees units fade back; but a stepped bucket missing no
    // more than a step brings would be full at that step, and the counter announces a window more.
    const held: Array<[number, number, number, number, number?]> = [...FIRST, [149_000, 20, 100, 225_000, 10], [151_000, 70, 100, 300_000, 0]]
    expect(feed(held).evidence).toMatchObject({ model: 'boundary', stepUnits: 50 })
    expect(feed([...held, [152_000, 60, 100, 300_000, 10]]).result?.model).toBe('fading')
  })

  it('a bucket refilled in steps stays one', () => {
    expect(feed(STEPPED).evidence.model).toBe('boundary')
  })
})
