// The bound every strategy is measured against: the same arrivals, the same server
// model, the same per-client order and in-flight limit, but perfect knowledge, so no
// attempt is ever rejected. Earliest-token greedy: repeatedly admit, among clients
// whose next request could reach the server, the one that could reach it first, at
// the model's `nextAdmitAt`. With unit costs every admitted request takes one token
// whoever sends it, so serving the earliest-ready client first never delays the
// schedule's tail; ties go to the earlier ready time, then the lower client id.
import { maxInFlight, type ClientModel } from './client-model.js'
import { DEFAULT_ORIGIN_MS, DEFAULT_RTT_MS } from './run-simulation.js'
import type { ServerModel } from './types.js'
import type { Workload } from './workload.js'

export interface OracleOptions {
  workload: Workload
  /** A fresh model: the schedule consumes its state. */
  server: ServerModel
  clientModel: ClientModel
  rttMs?: number
  originMs?: number
}

export interface OracleResult {
  /** Last success − first send, as the simulator measures runs. */
  completionMs: number
  meanResponseMs: number
  /** Per client, per request: time the server admitted it (epoch ms). */
  admittedAt: number[][]
}

export function oracleSchedule(options: OracleOptions): OracleResult {
  const rttMs = options.rttMs ?? DEFAULT_RTT_MS
  const halfRtt = rttMs / 2
  const origin = options.originMs ?? DEFAULT_ORIGIN_MS
  const cap = maxInFlight(options.clientModel)
  const server = options.server
  const clients = options.workload.clients.filter((c) => c.arrivalsMs.length > 0)
  const admittedAt = clients.map(() => [] as number[])
  let remaining = 0
  for (const c of clients) remaining += c.arrivalsMs.length

  let serverNow = -Infinity
  let firstSend = Infinity
  let lastSuccess = -Infinity
  let responseSum = 0
  const requests = remaining
  while (remaining > 0) {
    let best = -1
    let bestReady = Infinity
    for (let i = 0; i < clients.length; i++) {
      const done = admittedAt[i]!
      const arrivals = clients[i]!.arrivalsMs
      const j = done.length
      if (j >= arrivals.length) continue
      // Sent on arrival, it reaches the server half an RTT later; it cannot be sent
      // before the request `cap` places earlier has come back, nor overtake its predecessor.
      let ready = origin + arrivals[j]! + halfRtt
      if (j >= cap) ready = Math.max(ready, done[j - cap]! + rttMs)
      if (j > 0) ready = Math.max(ready, done[j - 1]!)
      if (ready < bestReady) {
        bestReady = ready
        best = i
      }
    }
    const at = server.nextAdmitAt(Math.max(bestReady, serverNow), 1)
    const admission = server.admit(at, 1)
    if (!admission.admitted) {
      throw new Error(`oracle: ${server.name} refused at its own nextAdmitAt (${at})`)
    }
    serverNow = at
    const c = clients[best]!
    const j = admittedAt[best]!.length
    admittedAt[best]!.push(at)
    const arrival = origin + c.arrivalsMs[j]!
    firstSend = Math.min(firstSend, arrival)
    lastSuccess = Math.max(lastSuccess, at + halfRtt)
    responseSum += at + halfRtt - arrival
    remaining--
  }
  return {
    completionMs: requests > 0 ? lastSuccess - firstSend : NaN,
    meanResponseMs: requests > 0 ? responseSum / requests : NaN,
    admittedAt,
  }
}
