// The multiset against a sorted array, over random adds and deletes with many repeats.
import { describe, expect, it } from 'vitest'
import { stream } from '../../src/sim/random.js'
import { median } from '../../src/telemetry/median.js'
import { RankedMultiset } from '../../src/telemetry/ranked-multiset.js'

describe('RankedMultiset', () => {
  it.each([1, 2, 3, 4, 5])('answers as a sorted array does, seed %i', (seed) => {
    const random = stream(seed, 'ranked-multiset')
    const set = new RankedMultiset()
    const integers = new RankedMultiset() // kept alongside: capped sums are taken over integers
    const values: number[] = []
    // Few distinct values (repeats, as sources' counts) and many (as quota hints) in one run.
    const draw = () => (random() < 0.5 ? 1 + Math.floor(random() * 8) : Math.floor(random() * 100_000) / 7)
    for (let step = 0; step < 3_000; step++) {
      if (values.length > 0 && random() < 0.45) {
        const [value] = values.splice(Math.floor(random() * values.length), 1)
        set.delete(value!)
        if (Number.isInteger(value)) integers.delete(value!)
      } else {
        const value = draw()
        values.push(value)
        set.add(value)
        if (Number.isInteger(value)) integers.add(value)
      }
      const sorted = [...values].sort((a, b) => a - b)
      expect(set.size).toBe(sorted.length)
      expect(set.median()).toBe(median([...values]))
      if (sorted.length > 0) {
        const k = Math.floor(random() * sorted.length)
        expect(set.at(k)).toBe(sorted[k])
      }
      // Integer caps over integer values: the sum is exact, as a recount's.
      const cap = Math.floor(random() * 10)
      expect(integers.cappedSum(cap)).toBe(sorted.filter(Number.isInteger).reduce((sum, x) => sum + Math.min(x, cap), 0))
    }
  })

  it('sums everything under an infinite cap and refuses to delete what it does not hold', () => {
    const set = new RankedMultiset()
    for (const value of [3, 1, 3, 2]) set.add(value)
    expect(set.cappedSum(Infinity)).toBe(9)
    expect(set.cappedSum(2)).toBe(7)
    expect(new RankedMultiset().cappedSum(Infinity)).toBe(0)
    expect(() => set.delete(4)).toThrow(RangeError)
  })
})
