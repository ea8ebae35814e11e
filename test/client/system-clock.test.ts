import { describe, expect, it } from 'vitest'
import { systemClock } from '../../src/client/system-clock.js'

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
})
