import { describe, expect, it } from 'vitest'
import { multinomial, stream, uniform } from '../../src/sim/random.js'

describe('seeded randomness', () => {
  it('repeats a stream for the same seed and labels, and differs otherwise', () => {
    const draw = (seed: number, label: string) => { const r = stream(seed, label); return [r(), r(), r()] }
    expect(draw(3, 'a')).toEqual(draw(3, 'a'))
    expect(draw(3, 'a')).not.toEqual(draw(4, 'a'))
    expect(draw(3, 'a')).not.toEqual(draw(3, 'b'))
  })

  it('draws in [0, 1) with a mean near 1/2', () => {
    const r = stream(9, 'uniformity')
    let sum = 0
    let outside = 0
    for (let i = 0; i < 100_000; i++) {
      const u = r()
      if (!(u >= 0 && u < 1)) outside++
      sum += u
    }
    expect(outside).toBe(0)
    expect(Math.abs(sum / 100_000 - 0.5)).toBeLessThan(0.01)
    expect(uniform(() => 0.5, 10, 20)).toBe(15)
  })

  it('splits a total exactly, in proportion to the weights', () => {
    const counts = multinomial(stream(2, 'm'), 10_000, [1, 3, 0, 6])
    expect(counts.reduce((a, b) => a + b, 0)).toBe(10_000)
    expect(counts[2]).toBe(0)
    expect(Math.abs(counts[3]! / 10_000 - 0.6)).toBeLessThan(0.03)
    expect(Math.abs(counts[0]! / 10_000 - 0.1)).toBeLessThan(0.02)
  })
})
