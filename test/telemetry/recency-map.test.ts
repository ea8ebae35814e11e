import { describe, expect, it } from 'vitest'
import { RecencyMap } from '../../src/telemetry/recency-map.js'

describe('RecencyMap', () => {
  it('keeps keys from the least to the most recently set', () => {
    const map = new RecencyMap<string, number>()
    map.set('a', 1)
    map.set('b', 2)
    map.set('c', 3)
    map.set('a', 4) // moved to the newest end, value replaced
    expect([...map.values()]).toEqual([2, 3, 4])
    expect(map.oldestKey()).toBe('b')
    expect(map.oldestValue()).toBe(2)
    expect(map.newestKeys(2)).toEqual(['a', 'c'])
    expect(map.newestKeys(10)).toEqual(['a', 'c', 'b'])
    expect(map.get('a')).toBe(4)
    expect(map.size).toBe(3)
  })

  it('unlinks deleted keys from either end and the middle', () => {
    const map = new RecencyMap<string, number>()
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) map.set(key, i)
    expect(map.delete('b')).toBe(true)
    expect(map.delete('a')).toBe(true)
    expect(map.delete('d')).toBe(true)
    expect(map.delete('x')).toBe(false)
    expect([...map.values()]).toEqual([2])
    expect(map.oldestKey()).toBe('c')
    expect(map.newestKeys(5)).toEqual(['c'])
    map.delete('c')
    expect(map.size).toBe(0)
    expect(map.oldestKey()).toBeUndefined()
    expect(map.oldestValue()).toBeUndefined()
    map.set('e', 5)
    expect(map.has('e')).toBe(true)
    expect([...map.values()]).toEqual([5])
  })

  it('setting the newest key again changes only its value', () => {
    const map = new RecencyMap<string, number>()
    map.set('a', 1)
    map.set('b', 2)
    map.set('b', 3)
    expect([...map.values()]).toEqual([1, 3])
    expect(map.newestKeys(1)).toEqual(['b'])
  })
})
