// A burst over real HTTP with the server and the client on one manual clock: a fetch that
// records when each attempt went and what it got, and a driver that moves the clock on only
// while nothing is on the wire (so every response arrives at the instant it was sent).
import type { ManualClock } from './manual-clock.js'

export interface RecordingFetch {
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>
  /** Clock time of each attempt, in send order. */
  sentAt: number[]
  /** Status of each response, in arrival order. */
  statuses: number[]
  onWire(): number
}

export function recordingFetch(clock: ManualClock): RecordingFetch {
  const sentAt: number[] = []
  const statuses: number[] = []
  let onWire = 0
  const fetchOnClock = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    onWire++
    sentAt.push(clock.now())
    try {
      const response = await fetch(input, init)
      statuses.push(response.status)
      return response
    } finally {
      onWire--
    }
  }
  return { fetch: fetchOnClock, sentAt, statuses, onWire: () => onWire }
}

/** Waits for every call, advancing the clock to its next timer whenever nothing is on the wire (bounded). */
export async function settleOnClock(clock: ManualClock, calls: Promise<Response>[], wire: RecordingFetch): Promise<Response[]> {
  let settled = 0
  for (const call of calls) void call.finally(() => settled++).catch(() => undefined)
  for (let turn = 0; turn < 2_000 && settled < calls.length; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    if (settled < calls.length && wire.onWire() === 0) await clock.next(3_600_000)
  }
  return Promise.all(calls)
}
