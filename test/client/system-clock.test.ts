import { afterEach, describe, expect, it, vi } from 'vitest'
import { MAX_TIMEOUT_MS, systemClock } from '../../src/client/system-clock.js'

const DAY_MS = 24 * 3600 * 1000

/** Fake timers that move the wall clock and the monotonic one (performance.now) together, as real time does. */
function useFakeTime(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] })
}

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
      useFakeTime()
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
      useFakeTime()
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
      useFakeTime()
      let woke = false
      void systemClock.sleep(30 * DAY_MS).then(() => (woke = true))
      await vi.advanceTimersByTimeAsync(1000)
      expect(woke).toBe(false)
      await vi.advanceTimersByTimeAsync(30 * DAY_MS)
      expect(woke).toBe(true)
    })
  })
})

describe('systemClock when the wall clock is set back', () => {
  // A fresh module each time: the clock never going back is module-wide state, and the fake
  // timers of the other tests move the wall clock by weeks.
  const freshClock = async () => {
    vi.resetModules()
    return (await import('../../src/client/system-clock.js')).systemClock
  }
  afterEach(() => {
    vi.useRealTimers()
  })
  const HOUR_MS = 3_600_000

  it('never goes back: after a step back it counts on from where it was, until the wall clock is set right', async () => {
    useFakeTime()
    const clock = await freshClock()
    const before = clock.now()
    vi.setSystemTime(Date.now() - 3 * HOUR_MS)
    expect(clock.now()).toBe(before)
    vi.advanceTimersByTime(1_000)
    expect(clock.now()).toBe(before + 1_000)
    vi.setSystemTime(Date.now() + 3 * HOUR_MS) // set right: the wall clock again
    expect(clock.now()).toBe(Date.now())
    vi.setSystemTime(Date.now() + 10 * HOUR_MS) // a step forward passes through
    expect(clock.now()).toBe(before + 1_000 + 10 * HOUR_MS)
  })

  it('a call still ends near its deadline, not hours later', async () => {
    useFakeTime()
    const clock = await freshClock()
    const { createLimiter } = await import('../../src/client/create-limiter.js')
    const { none } = await import('../../src/core/pacers/index.js')
    const limiter = createLimiter({ clock, strategy: none(), deadlineMs: 1_000 })
    // An attempt that never answers and ignores its signal.
    const call = limiter.run({ scope: 's', attempt: () => new Promise<never>(() => {}) })
    const settled = call.then(
      () => 'value',
      (error: Error) => error.name,
    )
    vi.setSystemTime(Date.now() - 3 * HOUR_MS)
    // The clock cannot tell when, between two readings, the wall clock stepped back: the time in
    // between is lost, so the deadline comes at most one more deadline later (before: 3 h later).
    await vi.advanceTimersByTimeAsync(2_000)
    await expect(Promise.race([settled, Promise.resolve('pending')])).resolves.toBe('DeadlineError')
  })
})
