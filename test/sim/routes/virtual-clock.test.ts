import { describe, expect, it } from 'vitest'
import { VirtualClock } from '../../../src/sim/routes/virtual-clock.js'

describe('VirtualClock', () => {
  it('fires timers in time order, letting each one\'s promise chain finish before time moves', async () => {
    const clock = new VirtualClock(1000)
    const seen: Array<[string, number]> = []
    clock.setTimer(30, (label) => seen.push([label, clock.now()]), 'c')
    clock.setTimer(10, () => {
      // A chain of promises started by a timer sees the timer's time, not a later one.
      void Promise.resolve().then(() => Promise.resolve()).then(() => seen.push(['a-chain', clock.now()]))
    }, undefined)
    void clock.sleep(20).then(() => seen.push(['b', clock.now()]))
    const cleared = clock.setTimer(15, () => seen.push(['never', clock.now()]), undefined)
    clock.clearTimer(cleared)
    expect(await clock.run(() => false, Infinity)).toBe(true)
    expect(seen).toEqual([['a-chain', 1010], ['b', 1020], ['c', 1030]])
  })

  it('stops at the time limit, and when only housekeeping timers are left', async () => {
    const clock = new VirtualClock(0)
    let fired = 0
    clock.setTimer(100, () => fired++, undefined)
    clock.setTimer(5000, () => fired++, undefined)
    expect(await clock.run(() => false, 1000)).toBe(false)
    expect([fired, clock.now()]).toEqual([1, 100])
    const idle = new VirtualClock(0)
    idle.setTimer(60_000, () => fired++, undefined, true)
    expect(await idle.run(() => false, Infinity)).toBe(true)
    expect(fired).toBe(1)
  })

  it('rejects a sleep whose signal aborts', async () => {
    const clock = new VirtualClock(0)
    const controller = new AbortController()
    const sleeping = clock.sleep(50, controller.signal)
    controller.abort(new Error('stop'))
    await expect(sleeping).rejects.toThrow('stop')
  })
})
