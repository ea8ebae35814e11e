// A binary min-heap of timed events. Ties in time keep insertion order (a sequence
// number breaks them), so a run is a pure function of its inputs: no promise
// scheduling, no timer jitter, the same order on every machine.

export interface TimedEvent {
  /** Virtual time (ms) at which the event fires. */
  at: number
  /** Insertion sequence; set by the queue. */
  seq: number
}

export class EventQueue<E extends TimedEvent> {
  private readonly heap: E[] = []
  private nextSeq = 0

  get size(): number {
    return this.heap.length
  }

  push(event: E): void {
    event.seq = this.nextSeq++
    const heap = this.heap
    heap.push(event)
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      const p = heap[parent]!
      if (!before(event, p)) break
      heap[i] = p
      i = parent
    }
    heap[i] = event
  }

  /** The earliest event, without removing it. */
  peek(): E | undefined {
    return this.heap[0]
  }

  pop(): E | undefined {
    const heap = this.heap
    const top = heap[0]
    if (top === undefined) return undefined
    const last = heap.pop()!
    const n = heap.length
    if (n > 0) {
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        if (left >= n) break
        const right = left + 1
        let child = left
        if (right < n && before(heap[right]!, heap[left]!)) child = right
        const c = heap[child]!
        if (!before(c, last)) break
        heap[i] = c
        i = child
      }
      heap[i] = last
    }
    return top
  }
}

function before(a: TimedEvent, b: TimedEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq)
}
