// The bound every strategy is measured against: the same arrivals, the same server
// model, the same per-client order and in-flight limit, but perfect knowledge, so no
// attempt is ever rejected. Earliest-token greedy: repeatedly admit, among clients
// whose next request could reach the server, the one that could reach it first, at
// the model's `nextAdmitAt`. With unit costs every admitted request takes one token
// whoever sends it, so serving the earliest-ready client first never delays the
// schedule's tail; ties go to the earlier ready time, then the lower client id.
//
// Routes: when the workload's requests carry routes and the server has endpoint limits
// (`admitRequest`), each client's requests of one route form their own ordered stream
// (a client that sends every request when it arrives keeps no order across routes), and
// the next admission goes to the stream that can be admitted first at the model's
// `nextAdmitAtFor`, since a route's own limit can hold its head back while others pass.
import { maxInFlight, type ClientModel } from './client-model.js'
import { DEFAULT_ORIGIN_MS, DEFAULT_RTT_MS } from './run-simulation.js'
import type { EndpointLimitedModel } from './servers/endpoint-limits.js'
import type { ServerModel } from './types.js'
import type { ClientWorkload, Workload } from './workload.js'

export interface OracleOptions {
  workload: Workload
  /** A fresh model: the schedule consumes its state. */
  server: ServerModel
  clientModel: ClientModel
  rttMs?: number
  originMs?: number
  /** Requests in flight per stream; default the client model's. */
  inFlight?: number
}

export interface OracleResult {
  /** Last success − first send, as the simulator measures runs. */
  completionMs: number
  meanResponseMs: number
  /** Per client (per client and route, with routes), per request: time the server admitted it (epoch ms). */
  admittedAt: number[][]
  /** With routes: each route's last success − the run's first send. */
  routeCompletionMs?: Record<string, number>
}

interface Stream {
  arrivalsMs: number[]
  route: string | undefined
}

const isRouted = (server: ServerModel): server is EndpointLimitedModel => typeof (server as Partial<EndpointLimitedModel>).admitRequest === 'function'

/** Per client, or per client and route when the requests carry routes. */
function streamsOf(clients: readonly ClientWorkload[], routed: boolean): Stream[] {
  if (!routed) return clients.map((c) => ({ arrivalsMs: c.arrivalsMs, route: undefined }))
  const streams: Stream[] = []
  for (const c of clients) {
    const byRoute = new Map<string, number[]>()
    c.arrivalsMs.forEach((at, j) => {
      const route = c.routes?.[j] ?? ''
      let list = byRoute.get(route)
      if (!list) byRoute.set(route, (list = []))
      list.push(at)
    })
    for (const [route, arrivalsMs] of byRoute) streams.push({ arrivalsMs, route })
  }
  return streams
}

const splitRoute = (route: string): [string, string] => {
  const space = route.indexOf(' ')
  return space < 0 ? ['GET', route] : [route.slice(0, space), route.slice(space + 1)]
}

export function oracleSchedule(options: OracleOptions): OracleResult {
  const rttMs = options.rttMs ?? DEFAULT_RTT_MS
  const halfRtt = rttMs / 2
  const origin = options.originMs ?? DEFAULT_ORIGIN_MS
  const cap = options.inFlight ?? maxInFlight(options.clientModel)
  const server = options.server
  const present = options.workload.clients.filter((c) => c.arrivalsMs.length > 0)
  const routed = isRouted(server) && present.some((c) => c.routes !== undefined)
  const clients = streamsOf(present, routed)
  const methodPath = clients.map((c) => splitRoute(c.route ?? ''))
  const admittedAt = clients.map(() => [] as number[])
  const routeLast = new Map<string, number>()
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
    let bestAt = Infinity
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
      if (routed) {
        const [method, path] = methodPath[i]!
        const at = (server as EndpointLimitedModel).nextAdmitAtFor(Math.max(ready, serverNow), 1, method, path)
        if (at < bestAt || (at === bestAt && ready < bestReady)) {
          bestAt = at
          bestReady = ready
          best = i
        }
      } else if (ready < bestReady) {
        bestReady = ready
        best = i
      }
    }
    const c = clients[best]!
    const at = routed ? bestAt : server.nextAdmitAt(Math.max(bestReady, serverNow), 1)
    const admission = routed
      ? (server as EndpointLimitedModel).admitRequest(at, 1, methodPath[best]![0], methodPath[best]![1])
      : server.admit(at, 1)
    if (!admission.admitted) {
      throw new Error(`oracle: ${server.name} refused at its own nextAdmitAt (${at})`)
    }
    serverNow = at
    const j = admittedAt[best]!.length
    admittedAt[best]!.push(at)
    const arrival = origin + c.arrivalsMs[j]!
    firstSend = Math.min(firstSend, arrival)
    lastSuccess = Math.max(lastSuccess, at + halfRtt)
    if (c.route !== undefined) routeLast.set(c.route, Math.max(routeLast.get(c.route) ?? -Infinity, at + halfRtt))
    responseSum += at + halfRtt - arrival
    remaining--
  }
  const result: OracleResult = {
    completionMs: requests > 0 ? lastSuccess - firstSend : NaN,
    meanResponseMs: requests > 0 ? responseSum / requests : NaN,
    admittedAt,
  }
  if (routed) result.routeCompletionMs = Object.fromEntries([...routeLast].map(([route, last]) => [route, last - firstSend]))
  return result
}
