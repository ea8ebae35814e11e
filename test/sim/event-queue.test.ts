import { describe, expect, it } from 'vitest'
import { EventQueue } from '../../src/sim/event-queue.js'
import { stream } from '../../src/sim/random.js'

interface E { at: number; seq: number; label: string }

describe('EventQueue', () => {
  it('pops events in time order', () => {
    const q = new EventQueue<E>()
    for (const at of [5, 1, 4, 2, 3]) q.push({ at, seq: 0, label: String(at) })
    const out: number[] = []
    for (let e = q.pop(); e; e = q.pop()) out.push(e.at)
    expect(out).toEqual([1, 2, 3, 4, 5])
  })

  it('keeps insertion order among events at the same time', () => {
    const q = new EventQueue<E>()
    q.push({ at: 2, seq: 0, label: 'late' })
    for (const label of ['a', 'b', 'c', 'd', 'e', 'f']) q.push({ at: 1, seq: 0, label })
    const out: string[] = []
    for (let e = q.pop(); e; e = q.pop()) out.push(e.label)
    expect(out).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'late'])
  })

  it('agrees with a sort on many interleaved pushes and pops', () => {
    const random = stream(1, 'heap')
    const q = new EventQueue<E>()
    const reference: Array<{ at: number; order: number }> = []
    const popped: number[] = []
    const expected: number[] = []
    let order = 0
    for (let i = 0; i < 2000; i++) {
      if (random() < 0.6 || q.size === 0) {
        const at = Math.floor(random() * 50)
        q.push({ at, seq: 0, label: String(order) })
        reference.push({ at, order: order++ })
      } else {
        reference.sort((a, b) => a.at - b.at || a.order - b.order)
        expected.push(reference.shift()!.order)
        popped.push(Number(q.pop()!.label))
      }
    }
    expect(popped).toEqual(expected)
    expect(q.peek()).toBeDefined()
  })
})
