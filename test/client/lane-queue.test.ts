import { describe, expect, it } from 'vitest'
import { LaneQueue, type QueueItem } from '../../src/client/lane-queue.js'

const item = (seq: number, priority = 0): QueueItem => ({ seq, priority })

describe('LaneQueue', () => {
  it('keeps arrival order and puts an older item (a retry) back ahead of newer ones', () => {
    const queue = new LaneQueue<QueueItem>()
    for (const seq of [3, 4, 5]) queue.insert(item(seq))
    queue.insert(item(1))
    queue.insert(item(2))
    expect(queue.toArray().map((i) => i.seq)).toEqual([1, 2, 3, 4, 5])
    expect(queue.shift()?.seq).toBe(1)
    queue.insert(item(1))
    expect(queue.peek()?.seq).toBe(1)
  })

  it('orders by priority first', () => {
    const queue = new LaneQueue<QueueItem>()
    queue.insert(item(1))
    queue.insert(item(2, 5))
    queue.insert(item(3))
    expect(queue.toArray().map((i) => i.seq)).toEqual([2, 1, 3])
  })

  it('removes items anywhere and compacts after many shifts', () => {
    const queue = new LaneQueue<QueueItem>()
    const items = Array.from({ length: 3_000 }, (_, i) => item(i))
    for (const i of items) queue.insert(i)
    for (let i = 0; i < 2_000; i++) queue.shift()
    expect(queue.size).toBe(1_000)
    expect(queue.remove(items[2_500] as QueueItem)).toBe(true)
    expect(queue.remove(items[0] as QueueItem)).toBe(false)
    expect(queue.removeWhere((i) => i.seq % 2 === 0)).toHaveLength(499)
    expect(queue.peek()?.seq).toBe(2_001)
    expect(queue.size).toBe(500)
  })
})
