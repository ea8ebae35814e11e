import { describe, expect, it } from 'vitest'
import { ci95HalfWidth, jainIndex, mean, percentile, sampleStdDev, tCritical95 } from '../../src/sim/statistics.js'

describe('statistics', () => {
  it('takes nearest-rank percentiles', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    expect(percentile(sorted, 50)).toBe(5)
    expect(percentile(sorted, 95)).toBe(10)
    expect(percentile(sorted, 10)).toBe(1)
    expect(percentile([], 50)).toBeNaN()
  })

  it("computes Jain's index: 1 for equal shares, 1/n when one takes all", () => {
    expect(jainIndex([3, 3, 3, 3])).toBe(1)
    expect(jainIndex([1, 0, 0, 0])).toBe(0.25)
    expect(jainIndex([1, 2])).toBeCloseTo(9 / 10, 12)
    expect(jainIndex([])).toBe(1)
  })

  it('computes mean, sample standard deviation and the t-based 95% CI', () => {
    const values = [2, 4, 4, 4, 5, 5, 7, 9]
    expect(mean(values)).toBe(5)
    expect(sampleStdDev(values)).toBeCloseTo(Math.sqrt(32 / 7), 12)
    expect(ci95HalfWidth(values)).toBeCloseTo((2.365 * Math.sqrt(32 / 7)) / Math.sqrt(8), 12)
    expect(ci95HalfWidth([1])).toBe(0)
    expect(tCritical95(29)).toBe(2.045)
    expect(tCritical95(1000)).toBe(1.96)
  })
})
