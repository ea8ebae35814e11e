// The page's copy of the protocol (src/register/worker-messages.ts) and the worker's
// (sw/messages.ts) must describe the same messages: checked at type level and by
// feeding each side what the other produces.
import { describe, expect, expectTypeOf, it } from 'vitest'
import * as page from '../../src/register/worker-messages.js'
import * as worker from '../../sw/messages.js'

describe('worker message protocol', () => {
  it('has the same message tags on both sides', () => {
    expect(page.PAGE_MESSAGE).toEqual(worker.PAGE_MESSAGE)
    expect(page.WORKER_MESSAGE).toEqual(worker.WORKER_MESSAGE)
  })

  it('has the same message types on both sides', () => {
    expectTypeOf<page.PageMessage>().toEqualTypeOf<worker.PageMessage>()
    expectTypeOf<page.WorkerMessage>().toEqualTypeOf<worker.WorkerMessage>()
    expectTypeOf<page.WorkerInfo>().toEqualTypeOf<worker.WorkerInfo>()
  })

  it('page messages are read by the worker', () => {
    const messages: page.PageMessage[] = [
      { type: page.PAGE_MESSAGE.stats, id: 1 },
      { type: page.PAGE_MESSAGE.subscribe, events: ['rate'] },
      { type: page.PAGE_MESSAGE.unsubscribe, events: ['rate'] },
      { type: page.PAGE_MESSAGE.unsubscribe },
    ]
    for (const message of messages) expect(worker.readPageMessage(structuredClone(message))).toEqual(message)
  })

  it('worker messages are read by the page', () => {
    const info = { instanceId: 'w', startedAt: 5 }
    const reply: worker.WorkerMessage = { type: worker.WORKER_MESSAGE.statsReply, id: 1, stats: [{ scope: 's' }], worker: info }
    const event: worker.WorkerMessage = { type: worker.WORKER_MESSAGE.event, event: 'rate', detail: { ratePerSecond: 2 }, at: 9 }
    expect(page.readStatsReply(structuredClone(reply))).toEqual({ stats: [{ scope: 's' }], worker: info })
    expect(page.readWorkerEvent(structuredClone(event))).toEqual({ event: 'rate', detail: { ratePerSecond: 2 }, at: 9 })
  })

  it('the page ignores what is not a polite-fetch message', () => {
    for (const data of [null, 'x', { type: 'SKIP_WAITING' }, { type: page.WORKER_MESSAGE.statsReply, worker: {} }, { type: page.WORKER_MESSAGE.event }]) {
      expect(page.readStatsReply(data)).toBeUndefined()
      expect(page.readWorkerEvent(data)).toBeUndefined()
    }
  })
})
