import { describe, expect, it } from 'vitest'
import type { Signal } from '../../src/core/types.js'
import { DEFAULT_ORIGIN_MS, runSimulation, type SignalPath } from '../../src/sim/run-simulation.js'
import { exponential } from '../../src/core/pacers/exponential.js'
import { scenarioByName } from '../../src/sim/scenarios.js'
import { createServerModel } from '../../src/sim/servers/index.js'
import { REAL_SIGNAL_PATH } from '../../src/sim/signal-path.js'
import { directReader, memoizedReader } from '../../src/sim/signal-memo.js'
import { generateWorkload } from '../../src/sim/workload.js'
import { FEEDBACK_MODES } from '../../src/sim/types.js'

describe('memoised signal reading', () => {
  it('gives what the real parser gives, for every response of a run in every feedback mode', () => {
    for (const feedback of FEEDBACK_MODES) {
      const samples: Array<{ status: number; pairs: Array<[string, string]>; now: number }> = []
      // Record every response the real path renders, then compare both readers on them.
      const recording: SignalPath = {
        feedbackHeaders(admission, mode, now) {
          const pairs = REAL_SIGNAL_PATH.feedbackHeaders(admission, mode, now)
          samples.push({ status: admission.admitted ? 200 : 429, pairs, now: now + 10 })
          return pairs
        },
        readSignals: REAL_SIGNAL_PATH.readSignals,
      }
      runSimulation({
        workload: generateWorkload(scenarioByName('synthetic-5c-800')!, 3),
        server: createServerModel('token-bucket-stepped', { capacity: 100, perMinute: 80 }, DEFAULT_ORIGIN_MS),
        feedback,
        strategy: { strategy: exponential() },
        clientModel: 'paper',
        signalPath: recording,
        seed: 3,
        memoizeSignals: false,
      })
      expect(samples.length).toBeGreaterThan(800)
      const memo = memoizedReader(REAL_SIGNAL_PATH)
      const direct = directReader(REAL_SIGNAL_PATH)
      let throttledWithTimes = 0
      const mismatches: string[] = []
      const close = (x: number | undefined, y: number | undefined) => (x === undefined ? y === undefined : y !== undefined && Math.abs(x - y) < 1e-3)
      for (const s of samples) {
        const a: Signal = memo(s.status, s.pairs, s.now)
        const b: Signal = direct(s.status, s.pairs, s.now)
        const { retryAt: ra, resetAt: rsa, ...restA } = a
        const { retryAt: rb, resetAt: rsb, ...restB } = b
        if (JSON.stringify(restA) !== JSON.stringify(restB) || !close(ra, rb) || !close(rsa, rsb)) {
          mismatches.push(`${feedback} ${JSON.stringify(s.pairs)}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`)
        }
        if (a.kind === 'throttled' && ra !== undefined) throttledWithTimes++
      }
      expect(mismatches.slice(0, 3)).toEqual([])
      if (feedback !== 'status-only') expect(throttledWithTimes).toBeGreaterThan(0)
    }
  })

  it('returns a fresh object each time, so a pacer cannot change the cache', () => {
    const memo = memoizedReader(REAL_SIGNAL_PATH)
    const first = memo(429, [['Retry-After', '3']], 1_000_000)
    first.retryAt = 0
    expect(memo(429, [['Retry-After', '3']], 2_000_000).retryAt).toBe(2_003_000)
  })
})
