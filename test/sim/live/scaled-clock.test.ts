import { describe, expect, it } from 'vitest'
import { scaledClock } from '../../../src/sim/live/scaled-clock.js'

const wallMs = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('scaledClock', () => {
  it('rejects a time scale that is not a positive finite number', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => scaledClock(bad)).toThrow(RangeError)
  })

  it('starts at the given epoch and runs timeScale times faster than the wall clock', async () => {
    const clock = scaledClock(50, 1_000_000)
    const first = clock.now()
    expect(first).toBeGreaterThanOrEqual(1_000_000)
    await wallMs(20)
    // Lower bounds only: a busy machine may run late, never early.
    expect(clock.elapsedMs()).toBeGreaterThanOrEqual(20 * 50 - 50)
    expect(clock.now() - first).toBeGreaterThanOrEqual(20 * 50 - 50)
    expect(clock.timeScale).toBe(50)
  })

  it('sleeps model time: a model minute at x1000 is a wall 60 ms (unscaled, it would outlast the test timeout)', async () => {
    const clock = scaledClock(1_000)
    const before = clock.elapsedMs()
    await clock.sleep(60_000)
    expect(clock.elapsedMs() - before).toBeGreaterThanOrEqual(60_000 - 1_000)
  }, 5_000)

  it('rejects with the signal’s reason when aborted before or during the sleep', async () => {
    const clock = scaledClock(10)
    const already = AbortSignal.abort(new Error('before'))
    await expect(clock.sleep(1_000, already)).rejects.toThrow('before')
    const controller = new AbortController()
    const sleeping = clock.sleep(60_000, controller.signal)
    controller.abort(new Error('during'))
    await expect(sleeping).rejects.toThrow('during')
  })
})
