// Both ends of the worker protocol: what a page sends, the worker reads, and what the
// worker sends, the page reads (through structured clone, as postMessage delivers it).
import { describe, expect, it } from 'vitest'
import * as protocol from '../../src/protocol/worker-messages.js'

const page = protocol
const worker = protocol

describe('worker message protocol', () => {
  it('page messages are read by the worker', () => {
    const messages: protocol.PageMessage[] = [
      { type: page.PAGE_MESSAGE.stats, id: 1 },
      { type: page.PAGE_MESSAGE.subscribe, events: ['rate'] },
      { type: page.PAGE_MESSAGE.unsubscribe, events: ['rate'] },
      { type: page.PAGE_MESSAGE.unsubscribe },
    ]
    for (const message of messages) expect(worker.readPageMessage(structuredClone(message))).toEqual(message)
  })

  it('worker messages are read by the page', () => {
    const info = { instanceId: 'w', startedAt: 5 }
    const reply: protocol.WorkerMessage = { type: worker.WORKER_MESSAGE.statsReply, id: 1, stats: [{ scope: 's' }], worker: info }
    const event: protocol.WorkerMessage = { type: worker.WORKER_MESSAGE.event, event: 'rate', detail: { ratePerSecond: 2 }, at: 9 }
    expect(page.readStatsReply(structuredClone(reply))).toEqual({ stats: [{ scope: 's' }], worker: info, features: [] })
    const announcing = { ...reply, features: [page.WORKER_FEATURE.abort, 7] }
    expect(page.readStatsReply(structuredClone(announcing))?.features).toEqual([]) // malformed: none trusted
    expect(page.readStatsReply({ ...reply, features: [page.WORKER_FEATURE.abort] })?.features).toEqual(['abort'])
    expect(page.readWorkerEvent(structuredClone(event))).toEqual({ event: 'rate', detail: { ratePerSecond: 2 }, at: 9 })
  })

  it('the page ignores what is not a polite-fetch message', () => {
    for (const data of [null, 'x', { type: 'SKIP_WAITING' }, { type: page.WORKER_MESSAGE.statsReply, worker: {} }, { type: page.WORKER_MESSAGE.event }]) {
      expect(page.readStatsReply(data)).toBeUndefined()
      expect(page.readWorkerEvent(data)).toBeUndefined()
    }
  })
})
