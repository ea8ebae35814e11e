// Small, exact statistics for run metrics and seed aggregates.

/** Nearest-rank percentile (p in [0, 100]) of ascending-sorted values; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length
  if (n === 0) return NaN
  const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n)))
  return sorted[rank - 1]!
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}

/** Sample standard deviation (n − 1); 0 for fewer than two values. */
export function sampleStdDev(values: readonly number[]): number {
  const n = values.length
  if (n < 2) return 0
  const m = mean(values)
  let squares = 0
  for (const v of values) squares += (v - m) * (v - m)
  return Math.sqrt(squares / (n - 1))
}

/**
 * Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.
 * 1 for an empty or all-zero input (nothing is unfair about nothing).
 */
export function jainIndex(values: readonly number[]): number {
  let sum = 0
  let squares = 0
  for (const v of values) {
    sum += v
    squares += v * v
  }
  if (values.length === 0 || squares === 0) return 1
  return (sum * sum) / (values.length * squares)
}

// Two-sided 95% Student t critical values for 1…30 degrees of freedom.
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
  2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086,
  2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
]

/** Two-sided 95% t critical value; beyond 30 df it steps towards the normal 1.96. */
export function tCritical95(degreesOfFreedom: number): number {
  if (degreesOfFreedom < 1) return NaN
  if (degreesOfFreedom <= 30) return T95[degreesOfFreedom - 1]!
  if (degreesOfFreedom <= 40) return 2.021
  if (degreesOfFreedom <= 60) return 2.0
  if (degreesOfFreedom <= 120) return 1.98
  return 1.96
}

/** Half-width of the 95% confidence interval of the mean (t-distribution); 0 below two values. */
export function ci95HalfWidth(values: readonly number[]): number {
  const n = values.length
  if (n < 2) return 0
  return (tCritical95(n - 1) * sampleStdDev(values)) / Math.sqrt(n)
}
