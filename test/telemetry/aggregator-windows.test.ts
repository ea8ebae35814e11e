import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../src/server/memory-store.js'
import { createAggregator, DEFAULT_AGGREGATOR_OPTIONS } from '../../src/telemetry/aggregator.js'
import { aggregatorWindows, REFILL_UNITS_PER_WINDOW, windowForQuota } from '../../src/telemetry/aggregator-windows.js'

describe('aggregator windows sized for the quota', () => {
  it('gives the defaults at the paper\'s quota (80 per minute)', () => {
    const windows = aggregatorWindows(windowForQuota(80 / 60))
    expect(windows).toEqual({
      reportWindowMs: DEFAULT_AGGREGATOR_OPTIONS.reportWindowMs,
      reportBucketMs: DEFAULT_AGGREGATOR_OPTIONS.reportBucketMs,
      activeWindowMs: DEFAULT_AGGREGATOR_OPTIONS.activeWindowMs,
      activeBucketMs: DEFAULT_AGGREGATOR_OPTIONS.activeBucketMs,
    })
  })

  it('holds the same refill units on any quota: k times slower, k times longer', () => {
    for (const k of [0.01, 0.1, 3, 60, 3600]) {
      const perSecond = 80 / 60 / k
      expect(windowForQuota(perSecond) * perSecond / 1000).toBeCloseTo(REFILL_UNITS_PER_WINDOW, 9)
      const w = aggregatorWindows(windowForQuota(perSecond))
      expect(w.reportWindowMs / 30_000).toBeCloseTo(k, k < 0.1 ? 1 : 3)
      // Whole buckets, which the aggregator requires (it throws otherwise).
      expect(() => createAggregator(w)).not.toThrow()
      expect(w.activeWindowMs).toBe(2 * w.reportWindowMs)
    }
  })

  it('reaches the clients: an aggregate of a store built with them carries the window (AATB reports once per window)', async () => {
    const store = createMemoryStore(aggregatorWindows(1_800_000))
    expect((await store.read('acme', 'https://api.example.com', 1_000_000)).windowMs).toBe(1_800_000)
  })

  it('rejects a rate or a window that is not a positive finite number', () => {
    for (const bad of [0, -1, Number.NaN, Infinity]) {
      expect(() => windowForQuota(bad)).toThrow(RangeError)
      expect(() => aggregatorWindows(bad)).toThrow(RangeError)
    }
  })
})
