// A multiset of numbers that answers, in O(log d) for d distinct values, the k-th smallest
// (so the median) and the sum of min(x, cap) over its values. The aggregator keeps its
// sources' client counts, weights and quota hints in these: each new source address moves
// the per-source bounds, and sorting every source's counts to find them again cost about
// 1.3 ms per report at 10,000 addresses in one scope (bench/telemetry-sources.ts).
//
// An AVL tree of distinct values with their multiplicity, each node summing its subtree:
// deterministic (a randomised tree's shape would be the one thing in the aggregator an
// attacker could aim at) and one node per distinct value, so a scope whose sources mostly
// share a count holds a handful of nodes whatever the number of sources. Sums are exact, as
// a recount's, while values and sums are integers below 2^53 (client counts, and weights from
// the protocol's integer backlogs).
import { medianAt } from './median.js'

interface Node {
  value: number
  /** Occurrences of `value`. */
  count: number
  /** Occurrences in this subtree, and the sum of its values with their multiplicity. */
  size: number
  sum: number
  height: number
  left: Node | undefined
  right: Node | undefined
}

const sizeOf = (node: Node | undefined) => (node ? node.size : 0)
const sumOf = (node: Node | undefined) => (node ? node.sum : 0)
const heightOf = (node: Node | undefined) => (node ? node.height : 0)

function update(node: Node): void {
  const { left, right } = node
  node.size = sizeOf(left) + node.count + sizeOf(right)
  node.sum = sumOf(left) + node.value * node.count + sumOf(right)
  node.height = Math.max(heightOf(left), heightOf(right)) + 1
}

function rotateRight(node: Node): Node {
  const top = node.left!
  node.left = top.right
  top.right = node
  update(node)
  update(top)
  return top
}

function rotateLeft(node: Node): Node {
  const top = node.right!
  node.right = top.left
  top.left = node
  update(node)
  update(top)
  return top
}

function balance(node: Node): Node {
  update(node)
  const lean = heightOf(node.left) - heightOf(node.right)
  if (lean > 1) {
    if (heightOf(node.left!.left) < heightOf(node.left!.right)) node.left = rotateLeft(node.left!)
    return rotateRight(node)
  }
  if (lean < -1) {
    if (heightOf(node.right!.right) < heightOf(node.right!.left)) node.right = rotateRight(node.right!)
    return rotateLeft(node)
  }
  return node
}

function insert(node: Node | undefined, value: number): Node {
  if (!node) return { value, count: 1, size: 1, sum: value, height: 1, left: undefined, right: undefined }
  if (value < node.value) node.left = insert(node.left, value)
  else if (value > node.value) node.right = insert(node.right, value)
  else node.count++
  return balance(node)
}

/** The subtree without its smallest node, which `into` receives (value and count). */
function removeSmallest(node: Node, into: Node): Node | undefined {
  if (!node.left) {
    into.value = node.value
    into.count = node.count
    return node.right
  }
  node.left = removeSmallest(node.left, into)
  return balance(node)
}

function remove(node: Node | undefined, value: number): Node | undefined {
  if (!node) throw new RangeError(`${value} is not in the multiset`)
  if (value < node.value) node.left = remove(node.left, value)
  else if (value > node.value) node.right = remove(node.right, value)
  else if (node.count > 1) node.count--
  else if (!node.left || !node.right) return node.left ?? node.right
  else node.right = removeSmallest(node.right, node)
  return balance(node)
}

export class RankedMultiset {
  private root: Node | undefined

  /** Values held, counting repeats. */
  get size(): number {
    return sizeOf(this.root)
  }

  add(value: number): void {
    this.root = insert(this.root, value)
  }

  /** Remove one occurrence of `value`, which must be held. */
  delete(value: number): void {
    this.root = remove(this.root, value)
  }

  /** The k-th smallest value (0-based, repeats counted), for 0 <= k < size. */
  at(k: number): number {
    let node = this.root
    while (node) {
      const left = sizeOf(node.left)
      if (k < left) {
        node = node.left
      } else if (k < left + node.count) {
        return node.value
      } else {
        k -= left + node.count
        node = node.right
      }
    }
    throw new RangeError(`no value at ${k}`)
  }

  /** The median, as `median()` of the values would give it; undefined when empty. */
  median(): number | undefined {
    return medianAt(this.size, (k) => this.at(k))
  }

  /** The sum of min(x, cap) over the values (repeats counted). */
  cappedSum(cap: number): number {
    let below = 0
    let belowCount = 0
    let node = this.root
    while (node) {
      if (node.value < cap) {
        below += sumOf(node.left) + node.value * node.count
        belowCount += sizeOf(node.left) + node.count
        node = node.right
      } else {
        node = node.left
      }
    }
    const atOrAbove = this.size - belowCount
    return atOrAbove === 0 ? below : below + atOrAbove * cap
  }
}
