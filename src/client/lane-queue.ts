// The lane's waiting line. Why not p-queue: a retry must go back to the HEAD of its
// lane, ahead of calls that arrived after it (keeping arrival order), and the lane
// must look at its head's earliest send time and the pacer's delay before every
// attempt. p-queue starts a task as soon as concurrency allows and only knows fixed
// interval caps, so we keep a small ordered array instead: callers are ordered by
// (priority desc, arrival asc); fresh calls append in O(1), a retry re-enters by
// binary search at its original place, which is at or near the head.

export interface QueueItem {
  /** Arrival number in the limiter (smaller = earlier). */
  readonly seq: number
  readonly priority: number
}

function before(a: QueueItem, b: QueueItem): boolean {
  return a.priority !== b.priority ? a.priority > b.priority : a.seq < b.seq
}

export class LaneQueue<T extends QueueItem> {
  #items: (T | undefined)[] = []
  #head = 0

  get size(): number {
    return this.#items.length - this.#head
  }

  peek(): T | undefined {
    return this.#items[this.#head]
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined
    const item = this.#items[this.#head]
    this.#items[this.#head++] = undefined
    if (this.#head === this.#items.length) {
      this.#items.length = 0
      this.#head = 0
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return item
  }

  insert(item: T): void {
    const items = this.#items
    const last = items[items.length - 1]
    if (this.size === 0 || last === undefined || before(last, item)) {
      items.push(item)
      return
    }
    let low = this.#head
    let high = items.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (before(items[mid] as T, item)) low = mid + 1
      else high = mid
    }
    if (low === this.#head && this.#head > 0) {
      items[--this.#head] = item
      return
    }
    items.splice(low, 0, item)
  }

  /** Removes `item` (an aborted or expired call); false when it was not queued. */
  remove(item: T): boolean {
    const index = this.#items.indexOf(item, this.#head)
    if (index < 0) return false
    if (index === this.#head) this.shift()
    else this.#items.splice(index, 1)
    return true
  }

  /** Removes every item for which `predicate` is true, keeping order; returns them. */
  removeWhere(predicate: (item: T) => boolean): T[] {
    const removed: T[] = []
    const kept: (T | undefined)[] = []
    for (let i = this.#head; i < this.#items.length; i++) {
      const item = this.#items[i] as T
      if (predicate(item)) removed.push(item)
      else kept.push(item)
    }
    if (removed.length > 0) {
      this.#items = kept
      this.#head = 0
    }
    return removed
  }

  /** All queued items, head first (a copy). */
  toArray(): T[] {
    return this.#items.slice(this.#head) as T[]
  }
}
