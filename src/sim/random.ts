// Seeded randomness for the simulator. Every stream is derived from (seed, labels)
// so a strategy's own random draws never shift the workload or another client's
// draws: the same seed gives the same arrivals whatever runs beside them.
import type { Random } from '../core/types.js'

/** sfc32 (Chris Doty-Humphrey's Small Fast Counter): 128-bit state, passes PractRand, ~1 ns per draw. */
export function sfc32(a: number, b: number, c: number, d: number): Random {
  let s0 = a >>> 0
  let s1 = b >>> 0
  let s2 = c >>> 0
  let s3 = d >>> 0
  const next: Random = () => {
    const t = (((s0 + s1) >>> 0) + s3) >>> 0
    s3 = (s3 + 1) >>> 0
    s0 = s1 ^ (s1 >>> 9)
    s1 = (s2 + (s2 << 3)) >>> 0
    s2 = (s2 << 21) | (s2 >>> 11)
    s2 = (s2 + t) >>> 0
    return t / 4294967296
  }
  // Warm up so nearby seeds diverge before the first draw that matters.
  for (let i = 0; i < 12; i++) next()
  return next
}

/** 32-bit FNV-1a then a murmur finaliser: turns labels into well-mixed seed words. */
function hash32(text: string, salt: number): number {
  let h = (0x811c9dc5 ^ salt) >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b) >>> 0
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35) >>> 0
  h ^= h >>> 16
  return h >>> 0
}

/** An independent stream for `seed` and a path of labels, e.g. `stream(7, 'workload', 'real-trace-800')`. */
export function stream(seed: number, ...labels: Array<string | number>): Random {
  const key = `${seed}|${labels.join('|')}`
  return sfc32(hash32(key, 1), hash32(key, 2), hash32(key, 3), hash32(key, 4))
}

/** Uniform in [low, high). */
export function uniform(random: Random, low: number, high: number): number {
  return low + (high - low) * random()
}

/** Exponentially distributed with the given mean. */
export function exponentialSample(random: Random, mean: number): number {
  return -mean * Math.log(1 - random())
}

/** Pareto (type I) with scale 1 and shape `alpha`: heavy tail, P(X > x) = x^-alpha. */
export function paretoSample(random: Random, alpha: number): number {
  return Math.pow(1 - random(), -1 / alpha)
}

/**
 * Split `total` items over `weights.length` bins, each item independently landing in
 * bin i with probability weights[i] / sum (a multinomial draw). Exactly `total` in all.
 */
export function multinomial(random: Random, total: number, weights: readonly number[]): number[] {
  const counts = new Array<number>(weights.length).fill(0)
  let sum = 0
  for (const w of weights) sum += w
  const cumulative: number[] = []
  let running = 0
  for (const w of weights) {
    running += w / sum
    cumulative.push(running)
  }
  for (let i = 0; i < total; i++) {
    const u = random()
    // Binary search the first cumulative share above u.
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (u < cumulative[mid]!) hi = mid
      else lo = mid + 1
    }
    counts[lo]!++
  }
  return counts
}
