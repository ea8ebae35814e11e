import { describe, expect, it } from 'vitest'
import type { LimitObservation } from '../../../src/core/signals/limit-observation.js'
import { distinctPolicies, mostRestrictive } from '../../../src/core/signals/most-restrictive.js'

function limit(name: string, remaining: number | undefined, resetAt?: number, unit = 'requests'): LimitObservation {
  return { name, named: true, unit, remaining, resetAt }
}

describe('mostRestrictive', () => {
  it.each<[string, LimitObservation[], string | undefined]>([
    ['nothing announced', [], undefined],
    ['smallest remaining', [limit('a', 10, 5), limit('b', 3, 1), limit('c', 7, 9)], 'b'],
    ['tie: later reset', [limit('a', 3, 5), limit('b', 3, 9), limit('c', 3, 7)], 'b'],
    ['tie: a known reset beats an unknown one', [limit('a', 3), limit('b', 3, 1)], 'b'],
    ['tie, both unknown: the first', [limit('a', 3), limit('b', 3)], 'a'],
    ['tokens never pace attempts', [limit('tokens', 0, 9, 'tokens'), limit('requests', 50, 1)], 'requests'],
    ['concurrency never paces attempts', [limit('c', 0, 9, 'concurrent-requests')], undefined],
    ['a limit without remaining is skipped', [limit('a', undefined, 9), limit('b', 40, 1)], 'b'],
  ])('%s', (_label, limits, expected) => {
    expect(mostRestrictive(limits)?.name).toBe(expected)
  })
})

describe('distinctPolicies', () => {
  it('drops exact repeats and keeps policies that differ in any member', () => {
    const policies = [
      { name: 'default', quota: 100, unit: 'requests' },
      { name: 'default', quota: 100, unit: 'requests' },
      { name: 'default', quota: 100, unit: 'requests', windowMs: 60_000 },
      { name: 'default', quota: 100, unit: 'tokens' },
      { name: 'other', quota: 100, unit: 'requests' },
    ]
    expect(distinctPolicies(policies)).toStrictEqual([policies[0], policies[2], policies[3], policies[4]])
  })
})
