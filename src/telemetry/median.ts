// The median of a list of numbers, computed the same way by the memory aggregator and the
// Redis scripts (ascending order; the mean of the two middle values for an even count), so
// the two stores derive identical bounds from identical state.
export function median(values: number[]): number | undefined {
  values.sort((a, b) => a - b)
  return medianAt(values.length, (k) => values[k]!)
}

/** The median of `count` ordered values, given the k-th smallest (0-based): the rule of `median`, for a structure already in order. */
export function medianAt(count: number, at: (k: number) => number): number | undefined {
  if (count === 0) return undefined
  const middle = count >> 1
  return count % 2 === 1 ? at(middle) : (at(middle - 1) + at(middle)) / 2
}
