// The routes scenario with the shipped client: one `createClient` per simulated client,
// its `fetch` answered by the composite server model, all on one virtual clock. So what
// is measured is the whole client — lanes, the limiter's route splitter
// (`learnRouteSplits`, on by default), the pacer and `readSignals` on rendered headers —
// in virtual time. Every request is sent when it arrives (as an app calls fetch); the
// client's own defaults decide the rest, except its time bounds: `deadlineMs` and
// `maxRetryAfterMs` are the user's (the paper's clients retry until done), set to
// Infinity here so a run measures pacing, not a deadline.
import { createClient } from '../../client/create-client.js'
import { limiterDefaults } from '../../client/options.js'
import type { Strategy } from '../../core/types.js'
import { feedbackHeaders } from '../feedback-headers.js'
import { oracleSchedule } from '../oracle.js'
import { stream } from '../random.js'
import { DEFAULT_MAX_DURATION_MS, DEFAULT_ORIGIN_MS, DEFAULT_RTT_MS } from '../run-simulation.js'
import { scaleRun } from '../scale-run.js'
import type { Feedback } from '../types.js'
import { VirtualClock } from './virtual-clock.js'
import { generateRoutesWorkload, routeName, routesServer, type RoutesScenario } from './routes-scenario.js'

const ORIGIN = 'https://api.example'

/** `POST /orders` from the fetch shell's label (`POST https://api.example/orders`). */
function routeOfLabel(label: string | undefined): string {
  if (label === undefined) return ''
  const space = label.indexOf(' ')
  return `${label.slice(0, space)} ${new URL(label.slice(space + 1)).pathname}`
}

export interface RouteFigures {
  requests: number
  attempts: number
  throttled: number
  /** Last success of the route − the run's first send (NaN when none succeeded). */
  completionMs: number
  oracleCompletionMs: number
  /**
   * Where the route's 429s fell: in its origin's lane before that client's first `split`, in a lane
   * split off the origin (`origin#~route:…`, this route's or another's), or in the origin's lane after a split.
   */
  throttledBySource: ThrottledBySource
}

export interface ThrottledBySource {
  originBeforeSplit: number
  splitLane: number
  originAfterSplit: number
}

export interface RoutesRun {
  seed: number
  scale: number
  strategy: string
  feedback: Feedback
  attempts: number
  throttled: number
  completionMs: number
  oracleCompletionMs: number
  routes: Record<string, RouteFigures>
  /** `split` events across the clients. */
  splits: number
  /** Requests that did not end in a success by the time limit. */
  unfinished: number
  incomplete: boolean
}

export interface RoutesRunOptions {
  scenario: RoutesScenario
  seed: number
  scale: number
  feedback: Feedback
  /** Name in rows; `strategy` undefined = the client's default (atb()). */
  strategyName: string
  strategy?: () => Strategy
  learnRouteSplits?: boolean
  rttMs?: number
  /** Sees each client as it is created (its id in the workload), to listen to its events. */
  onClient?: (client: ReturnType<typeof createClient>, id: number, clock: VirtualClock) => void
}

export async function runRoutes(options: RoutesRunOptions): Promise<RoutesRun> {
  const { scenario, seed, scale, feedback } = options
  const rttMs = options.rttMs ?? DEFAULT_RTT_MS
  const halfRtt = rttMs / 2
  const origin = DEFAULT_ORIGIN_MS
  const { workload, maxDurationMs } = scaleRun(
    { workload: generateRoutesWorkload(scenario, seed), quota: scenario.global, maxDurationMs: DEFAULT_MAX_DURATION_MS },
    scale,
  )
  const oracle = oracleSchedule({
    workload,
    server: routesServer(scenario, scale, origin),
    clientModel: 'concurrent',
    inFlight: limiterDefaults.maxInFlight,
    rttMs,
    originMs: origin,
  })
  const server = routesServer(scenario, scale, origin)
  const clock = new VirtualClock(origin)
  const names = [routeName(scenario.limited), routeName(scenario.other)]
  const figures = new Map(
    names.map((n) => [n, { requests: 0, attempts: 0, throttled: 0, lastSuccess: -Infinity, bySource: { originBeforeSplit: 0, splitLane: 0, originAfterSplit: 0 } }]),
  )
  let attempts = 0
  let throttled = 0
  let splits = 0
  let pending = 0
  let firstSend = Infinity
  let lastSuccess = -Infinity

  const fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input))
    const method = (init?.method ?? 'GET').toUpperCase()
    const route = figures.get(`${method} ${url.pathname}`)!
    attempts++
    route.attempts++
    return new Promise((resolve) => {
      clock.setTimer(halfRtt, () => {
        const now = clock.now()
        const admission = server.admitRequest(now, 1, method, url.pathname)
        if (!admission.admitted) {
          throttled++
          route.throttled++
        }
        const headers = feedbackHeaders(admission, feedback, now)
        const status = admission.admitted ? 200 : 429
        clock.setTimer(halfRtt, () => resolve(new Response(null, { status, headers })), undefined)
      }, undefined)
    })
  }

  const clients = workload.clients.map((c) => {
    const client = createClient({
      clock,
      fetch,
      random: stream(seed, 'routes-client', c.id),
      deadlineMs: Infinity,
      maxRetryAfterMs: Infinity,
      ...(options.strategy ? { strategy: options.strategy() } : {}),
      ...(options.learnRouteSplits === undefined ? {} : { learnRouteSplits: options.learnRouteSplits }),
    })
    let split = false
    client.on('split', () => {
      splits++
      split = true
    })
    client.on('throttled', (event) => {
      const route = figures.get(routeOfLabel(event.label))
      if (route === undefined) return
      const source: keyof ThrottledBySource = event.scope.includes('#') ? 'splitLane' : split ? 'originAfterSplit' : 'originBeforeSplit'
      route.bySource[source]++
    })
    options.onClient?.(client, c.id, clock)
    c.arrivalsMs.forEach((arrivalMs, j) => {
      const name = c.routes![j]!
      const route = figures.get(name)!
      route.requests++
      pending++
      const [method, path] = name.split(' ') as [string, string]
      clock.setTimer(origin + arrivalMs - clock.now(), () => {
        firstSend = Math.min(firstSend, clock.now())
        client.fetch(`${ORIGIN}${path}`, { method }).then(
          (response) => {
            if (response.status === 200) {
              pending--
              route.lastSuccess = Math.max(route.lastSuccess, clock.now())
              lastSuccess = Math.max(lastSuccess, clock.now())
            }
          },
          () => undefined, // rejected (closed at the time limit): counted as unfinished
        )
      }, undefined)
    })
    return client
  })

  const finished = await clock.run(() => pending === 0, origin + maxDurationMs)
  await Promise.all(clients.map((c) => c.close()))
  const routes: Record<string, RouteFigures> = {}
  for (const [name, f] of figures) {
    routes[name] = {
      requests: f.requests,
      attempts: f.attempts,
      throttled: f.throttled,
      completionMs: f.lastSuccess > -Infinity ? f.lastSuccess - firstSend : NaN,
      oracleCompletionMs: oracle.routeCompletionMs?.[name] ?? NaN,
      throttledBySource: { ...f.bySource },
    }
  }
  return {
    seed,
    scale,
    strategy: options.strategyName,
    feedback,
    attempts,
    throttled,
    completionMs: lastSuccess - firstSend,
    oracleCompletionMs: oracle.completionMs,
    routes,
    splits,
    unfinished: pending,
    incomplete: !finished || pending > 0,
  }
}
