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
