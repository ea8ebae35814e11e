// The median of a list of numbers, computed the same way by the memory aggregator and the
// Redis scripts (ascending sort; the mean of the two middle values for an even count), so
// the two stores derive identical bounds from identical state.
export function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined
  values.sort((a, b) => a - b)
  const middle = values.length >> 1
  return values.length % 2 === 1 ? values[middle]! : (values[middle - 1]! + values[middle]!) / 2
}
