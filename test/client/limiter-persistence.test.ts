import { describe, expect, it } from 'vitest'
import { createLimiter } from '../../src/client/create-limiter.js'
import { RESTORE_TIMEOUT_MS } from '../../src/client/lane-persistence.js'
import type { Store } from '../../src/core/types.js'
import { flushPromises, ManualClock } from '../helpers/manual-clock.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'
import { AttemptLog, ok, throttled, track } from '../helpers/scripted-job.js'

function countingStore(initial: Record<string, unknown> = {}): Store & { writes: string[]; data: Map<string, unknown> } {
  const data = new Map(Object.entries(initial))
  const writes: string[] = []
  return {
    data,
    writes,
    get: (key) => Promise.resolve(data.get(key)),
    set: (key, value) => {
      writes.push(key)
      data.set(key, value)
      return Promise.resolve()
    },
  }
}

describe('limiter persistence', () => {
  it('coalesces pacer state writes to one per interval', async () => {
    const clock = new ManualClock()
    const store = countingStore()
    const limiter = createLimiter({ clock, random: () => 0, strategy: recordingStrategy(), store, persistIntervalMs: 1_000 })
    const log = new AttemptLog()
    const calls = Array.from({ length: 10 }, (_, i) => track(limiter.run(log.job('s', `r${i}`))))
    await flushPromises()
    for (const attempt of log.started) attempt.answer(ok)
    await flushPromises()
    expect(calls.every((c) => c.settled)).toBe(true)
    expect(store.writes).toEqual([])
    await clock.advance(1_000)
    expect(store.writes).toEqual(['polite-fetch:pacer:s'])
    await limiter.close()
  })

  it('resumes a scope from saved state, and starts fresh when the store fails or hangs', async () => {
    const saved = { kind: 'recording', version: 1, savedAt: 0, paced: true }
    const clock = new ManualClock()
    const strategy = recordingStrategy()
    const store = countingStore({ 'app:warm': saved })
    store.get = (key) => {
      if (key === 'app:broken') return Promise.reject(new Error('disk on fire'))
      if (key === 'app:hung') return new Promise(() => {})
      return Promise.resolve(store.data.get(key))
    }
    const limiter = createLimiter({ clock, random: () => 0, strategy, store, storeKeyPrefix: 'app:' })
    const log = new AttemptLog()
    track(limiter.run(log.job('warm', 'a')))
    track(limiter.run(log.job('broken', 'b')))
    track(limiter.run(log.job('hung', 'c')))
    await flushPromises()
    expect(log.order()).toEqual(['a#1', 'b#1'])
    expect(strategy.pacers.map((p) => p.paced)).toEqual([true, false])
    await clock.advance(RESTORE_TIMEOUT_MS)
    expect(log.order()).toEqual(['a#1', 'b#1', 'c#1'])
    await limiter.close()
  })

  it('does not hold a scope behind a write that never settles (a hung store), nor its close', async () => {
    const clock = new ManualClock()
    const store = countingStore()
    store.set = (key) => {
      store.writes.push(key)
      return new Promise(() => {})
    }
    const limiter = createLimiter({ clock, random: () => 0, strategy: recordingStrategy(), store, idleMs: 1_000 })
    const log = new AttemptLog()
    const first = track(limiter.run(log.job('s', 'a')))
    await flushPromises()
    log.last().answer(ok)
    await flushPromises()
    expect(first.settled).toBe(true)
    // Idle: the lane is evicted, and its state written (to a store that never answers).
    for (let i = 0; i < 5 && limiter.stats().length > 0; i++) await clock.advance(1_000)
    expect(limiter.stats()).toEqual([])
    expect(store.writes).toContain('polite-fetch:pacer:s')
    // The scope comes back: its call waits for the state at most RESTORE_TIMEOUT_MS, then starts fresh.
    track(limiter.run(log.job('s', 'b')))
    await clock.advance(RESTORE_TIMEOUT_MS)
    expect(log.order()).toEqual(['a#1', 'b#1'])
    log.last().answer(ok)
    const closed = track(limiter.close())
    await clock.advance(RESTORE_TIMEOUT_MS)
    expect(closed.settled).toBe(true)
  })

  it('writes every lane on close', async () => {
    const clock = new ManualClock()
    const store = countingStore()
    const limiter = createLimiter({ clock, random: () => 0, strategy: recordingStrategy(), store })
    const log = new AttemptLog()
    const call = track(limiter.run(log.job('s', 'a')))
    await flushPromises()
    log.last().answer(throttled())
    await flushPromises()
    await limiter.close()
    expect(call.settled).toBe(true)
    expect(store.data.get('polite-fetch:pacer:s')).toMatchObject({ kind: 'recording', paced: true })
  })
})
