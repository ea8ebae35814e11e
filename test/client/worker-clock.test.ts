// A page's clock: while the page is hidden each timer fires once, on the worker's answer or on the
// page's own timer, whichever comes first; while it is visible the page's timers alone. The worker here is a stand-in whose answers the test delivers (a
// hidden tab's throttled page timers are what only a real browser shows: bench:hidden-leader);
// the page's timers are vitest's fake ones.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_TIMEOUT_MS } from '../../src/client/system-clock.js'
import { systemClock } from '../../src/client/system-clock.js'
import { workerClock, type TimerWorker } from '../../src/client/worker-clock.js'

class StandInWorker implements TimerWorker {
  readonly received: Array<[number, number]> = []
  onmessage: ((event: { data: unknown }) => void) | null = null
  onerror: ((event: unknown) => void) | null = null
  terminated = false
  postMessage(message: [number, number]): void {
    this.received.push(message)
  }
  terminate(): void {
    this.terminated = true
  }
  /** The worker's timer `id` came due. */
  answer(id: number): void {
    this.onmessage?.({ data: id })
  }
}

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

function clockWithWorker() {
  const worker = new StandInWorker()
  let starts = 0
  const page = { hidden: true }
  const clock = workerClock(
    () => {
      starts++
      return worker
    },
    systemClock,
    () => page.hidden,
  )
  return { worker, clock, starts: () => starts, page }
}

describe('workerClock', () => {
  it('starts its worker at the first timer, and fires a timer once when the worker answers first', () => {
    const { worker, clock, starts } = clockWithWorker()
    expect(starts()).toBe(0)
    const fired: string[] = []
    const handle = clock.setTimer(1_000, (arg: string) => fired.push(arg), 'a')
    expect(starts()).toBe(1)
    expect(worker.received).toEqual([[handle, 1_000]])
    worker.answer(handle as number)
    expect(fired).toEqual(['a'])
    vi.advanceTimersByTime(5_000) // the page's own timer was cleared
    worker.answer(handle as number) // a late duplicate is ignored
    expect(fired).toEqual(['a'])
    clock.setTimer(10, () => {}, undefined)
    expect(starts()).toBe(1)
  })

  it('fires on the page timer when the worker stays silent, and ignores the worker answering later', () => {
    const { worker, clock } = clockWithWorker()
    const fired: number[] = []
    const handle = clock.setTimer(1_000, () => fired.push(Date.now()), undefined) as number
    const start = Date.now()
    vi.advanceTimersByTime(999)
    expect(fired).toEqual([])
    vi.advanceTimersByTime(1)
    expect(fired).toEqual([start + 1_000])
    expect(worker.received.at(-1)).toEqual([handle, -1]) // the worker's copy is cleared
    worker.answer(handle)
    expect(fired).toHaveLength(1)
  })

  it('clears both copies of a timer', () => {
    const { worker, clock } = clockWithWorker()
    const fired: number[] = []
    const handle = clock.setTimer(1_000, () => fired.push(1), undefined) as number
    clock.clearTimer(handle)
    expect(worker.received).toEqual([
      [handle, 1_000],
      [handle, -1],
    ])
    worker.answer(handle)
    vi.advanceTimersByTime(2_000)
    expect(fired).toEqual([])
  })

  it('keeps timing on the page when no worker can start, or when the worker fails after starting', () => {
    const none = workerClock(() => undefined, systemClock, () => true)
    const fired: string[] = []
    none.setTimer(500, (arg: string) => fired.push(arg), 'no worker')
    const { worker, clock } = clockWithWorker()
    clock.setTimer(500, (arg: string) => fired.push(arg), 'failed worker')
    worker.onerror?.(new Event('error'))
    expect(worker.terminated).toBe(true)
    vi.advanceTimersByTime(500)
    expect(fired.sort()).toEqual(['failed worker', 'no worker'])
    // After a failure no timer goes to the worker.
    const before = worker.received.length
    clock.setTimer(10, () => {}, undefined)
    expect(worker.received).toHaveLength(before)
  })

  it('leaves a timer beyond setTimeout’s range to the page clock, which chains it', () => {
    const { worker, clock } = clockWithWorker()
    const fired: number[] = []
    clock.setTimer(MAX_TIMEOUT_MS + 1, () => fired.push(1), undefined)
    expect(worker.received).toEqual([])
    vi.advanceTimersByTime(MAX_TIMEOUT_MS)
    expect(fired).toEqual([])
    vi.advanceTimersByTime(1)
    expect(fired).toEqual([1])
  })

  it('sleeps on the same timers and rejects with the signal’s reason when aborted', async () => {
    const { worker, clock } = clockWithWorker()
    const slept = clock.sleep(1_000)
    const [id] = worker.received[0]!
    worker.answer(id)
    await expect(slept).resolves.toBeUndefined()
    const controller = new AbortController()
    const aborted = clock.sleep(1_000, controller.signal)
    controller.abort(new Error('stop'))
    await expect(aborted).rejects.toThrow('stop')
    expect(worker.received.at(-1)![1]).toBe(-1)
  })

  it('starts no worker while the page is visible, and times in it once the page is hidden', () => {
    const { worker, clock, starts, page } = clockWithWorker()
    page.hidden = false
    const fired: string[] = []
    clock.setTimer(100, (arg: string) => fired.push(arg), 'visible')
    expect(starts()).toBe(0)
    vi.advanceTimersByTime(100)
    expect(fired).toEqual(['visible'])
    page.hidden = true
    const handle = clock.setTimer(100, (arg: string) => fired.push(arg), 'hidden') as number
    expect(starts()).toBe(1)
    expect(worker.received).toEqual([[handle, 100]])
    worker.answer(handle)
    expect(fired).toEqual(['visible', 'hidden'])
  })
})
