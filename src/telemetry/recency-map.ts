// A Map kept in least-recently-set order, whose reorder allocates nothing. The aggregator
// touches a scope (and a source's claim on it) on every report; doing that with a plain
// Map's delete + set leaves a hole per report, and V8 rebuilds the whole hash table each
// time the holes fill it: for 10,000 scopes that is a fresh ~0.5 MB table every few
// thousand reports, garbage that grows the old generation (measured: heapUsed peaked at
// 199 MiB for a 47 MiB live set under bench:telemetry-memory). Here each key has one node
// for its lifetime, linked oldest → newest; moving it to the newest end relinks two nodes.

interface Node<K, V> {
  key: K
  value: V
  older: Node<K, V> | undefined
  newer: Node<K, V> | undefined
}

export class RecencyMap<K, V> {
  private readonly nodes = new Map<K, Node<K, V>>()
  private oldestNode: Node<K, V> | undefined
  private newestNode: Node<K, V> | undefined

  get size(): number {
    return this.nodes.size
  }

  has(key: K): boolean {
    return this.nodes.has(key)
  }

  get(key: K): V | undefined {
    return this.nodes.get(key)?.value
  }

  /** Set the value and make the key the most recent. */
  set(key: K, value: V): void {
    let node = this.nodes.get(key)
    if (node) {
      node.value = value
      if (node === this.newestNode) return
      this.unlink(node)
    } else {
      node = { key, value, older: undefined, newer: undefined }
      this.nodes.set(key, node)
    }
    node.older = this.newestNode
    if (this.newestNode) this.newestNode.newer = node
    else this.oldestNode = node
    this.newestNode = node
  }

  delete(key: K): boolean {
    const node = this.nodes.get(key)
    if (!node) return false
    this.nodes.delete(key)
    this.unlink(node)
    return true
  }

  /** The least recently set key, or undefined when empty. */
  oldestKey(): K | undefined {
    return this.oldestNode?.key
  }

  /** The least recently set value, or undefined when empty. */
  oldestValue(): V | undefined {
    return this.oldestNode?.value
  }

  /** Values from the least to the most recently set. */
  *values(): IterableIterator<V> {
    for (let node = this.oldestNode; node; node = node.newer) yield node.value
  }

  /** Up to `limit` keys, the most recently set first. */
  newestKeys(limit: number): K[] {
    const keys: K[] = []
    for (let node = this.newestNode; node && keys.length < limit; node = node.older) keys.push(node.key)
    return keys
  }

  private unlink(node: Node<K, V>): void {
    if (node.older) node.older.newer = node.newer
    else this.oldestNode = node.newer
    if (node.newer) node.newer.older = node.older
    else this.newestNode = node.older
    node.older = undefined
    node.newer = undefined
  }
}
