import { afterEach, describe, expect, it, vi } from 'vitest'
import { MAX_TIMEOUT_MS, systemClock } from '../../src/client/system-clock.js'

const DAY_MS = 24 * 3600 * 1000

describe('systemClock', () => {
  it('reads epoch milliseconds', () => {
    const before = Date.now()
    const now = systemClock.now()
    expect(now).toBeGreaterThanOrEqual(before)
    expect(now).toBeLessThanOrEqual(Date.now())
  })

  it('sleep rejects with the signal reason when aborted before or during the wait', async () => {
    await expect(systemClock.sleep(10, AbortSignal.abort('before'))).rejects.toBe('before')
    const controller = new AbortController()
    const sleeping = systemClock.sleep(3_600_000, controller.signal)
    controller.abort('during')
    await expect(sleeping).rejects.toBe('during')
  })

  it('setTimer calls back with its argument unless cleared', async () => {
    const fired: string[] = []
    const cleared = systemClock.setTimer(0, (arg: string) => fired.push(arg), 'cleared')
    systemClock.clearTimer(cleared)
    await new Promise<void>((resolve) => systemClock.setTimer(0, () => resolve(), undefined, true))
    systemClock.setTimer(0, (arg: string) => fired.push(arg), 'kept')
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(fired).toEqual(['kept'])
  })

  describe('timers longer than setTimeout allows (about 24.8 days)', () => {
    // The fake timers reproduce the platform: a delay over 2^31 - 1 ms fires after 1 ms.
    afterEach(() => {
      vi.useRealTimers()
    })

    it('setTimer fires after the full delay, not at once', () => {
      vi.useFakeTimers()
      const fired: number[] = []
      systemClock.setTimer(30 * DAY_MS, (arg: number) => fired.push(arg), 30)
      vi.advanceTimersByTime(1000)
      expect(fired).toEqual([])
      vi.advanceTimersByTime(30 * DAY_MS - 1001)
      expect(fired).toEqual([])
      vi.advanceTimersByTime(1)
      expect(fired).toEqual([30])
    })

    it('clearTimer cancels a long timer in any of its steps', () => {
      vi.useFakeTimers()
      const fired: string[] = []
      const early = systemClock.setTimer(60 * DAY_MS, (arg: string) => fired.push(arg), 'early')
      systemClock.clearTimer(early)
      const late = systemClock.setTimer(60 * DAY_MS, (arg: string) => fired.push(arg), 'late')
      vi.advanceTimersByTime(MAX_TIMEOUT_MS + 1)
      systemClock.clearTimer(late)
      vi.advanceTimersByTime(60 * DAY_MS)
      expect(fired).toEqual([])
    })

    it('sleep waits the full delay', async () => {
      vi.useFakeTimers()
      let woke = false
      void systemClock.sleep(30 * DAY_MS).then(() => (woke = true))
      await vi.advanceTimersByTimeAsync(1000)
      expect(woke).toBe(false)
      await vi.advanceTimersByTimeAsync(30 * DAY_MS)
      expect(woke).toBe(true)
    })
  })
})
