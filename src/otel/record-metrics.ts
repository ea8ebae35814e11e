// OpenTelemetry metrics for a client or limiter, in one line: `recordMetrics(client)`.
// Built only on the public surface — the limiter's events and `stats()` — so a client that
// does not call this pays nothing (an event without a listener costs one length check),
// and one that does pays a few counter adds per attempt. Lane gauges are read from
// `stats()` when the SDK collects, never per request.
//
// Names follow the OpenTelemetry conventions: our own instruments live under the
// `polite_fetch.` namespace, durations are histograms in seconds, and the attributes use
// the HTTP semantic conventions' names where one exists (`http.request.resend_count`,
// `http.response.status_code`, `error.type`).
import { type Attributes, type BatchObservableCallback, type Meter, type MeterProvider, metrics } from '@opentelemetry/api'
import type { ScopeStats } from '../client/lane.js'
import type { LimiterEventName, Listener } from '../client/limiter-events.js'

/** What `recordMetrics` reads: a `Client` (`createClient`) or a `Limiter` (`createLimiter`, `install().limiter`). */
export interface MetricsSource {
  on<E extends LimiterEventName>(event: E, listener: Listener<E>): () => void
  stats(): ScopeStats[]
}

export interface RecordMetricsOptions {
  /** Where the instruments come from. @default the global MeterProvider of `@opentelemetry/api` */
  meterProvider?: MeterProvider
  /** Extra attributes on every measurement (e.g. `{ 'service.component': 'billing-sync' }`). */
  attributes?: Attributes
}

export interface MetricsRecording {
  /** Stops recording: the listeners are removed and the gauges no longer report. */
  stop(): void
}

/** Instrumentation scope name. */
export const METER_NAME = 'polite-fetch'

/** The instruments' names, for dashboards and tests. */
export const METRIC = {
  attempts: 'polite_fetch.attempts',
  throttled: 'polite_fetch.throttled',
  giveUps: 'polite_fetch.give_ups',
  waitDuration: 'polite_fetch.wait.duration',
  laneRate: 'polite_fetch.lane.rate',
  laneBacklog: 'polite_fetch.lane.backlog',
} as const

/** The lane (quota scope) of a measurement: an origin, or `origin#policy`. */
export const SCOPE_ATTRIBUTE = 'polite_fetch.scope'
const RESEND_COUNT = 'http.request.resend_count'
const STATUS_CODE = 'http.response.status_code'
const ERROR_TYPE = 'error.type'

/**
 * Waits from 0 to minutes: a lane gated by a Retry-After, or paced at a few per minute,
 * holds calls far longer than the HTTP duration buckets (which end at 10 s) expect.
 */
const WAIT_BUCKETS_S = [0, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

export function recordMetrics(source: MetricsSource, options: RecordMetricsOptions = {}): MetricsRecording {
  const meter: Meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(METER_NAME)
  const extra = options.attributes ?? {}

  const attempts = meter.createCounter(METRIC.attempts, {
    description: 'Attempts sent, first sends and resends; a resend has http.request.resend_count >= 1.',
    unit: '{attempt}',
  })
  const throttled = meter.createCounter(METRIC.throttled, {
    description: 'Attempts answered with congestion: 429 (throttled) or 503/529 (overloaded).',
    unit: '{response}',
  })
  const giveUps = meter.createCounter(METRIC.giveUps, {
    description: 'Calls that ended without success, by reason (error.type): deadline, retry-budget, server-no-retry, …',
    unit: '{call}',
  })
  const wait = meter.createHistogram(METRIC.waitDuration, {
    description: 'How long an attempt waited in its lane before it was sent (queue, pacing, retry wait).',
    unit: 's',
    advice: { explicitBucketBoundaries: WAIT_BUCKETS_S },
  })
  const rate = meter.createObservableGauge(METRIC.laneRate, {
    description: "The rate each lane's pacer allows now; absent while a lane is not pacing.",
    unit: '{request}/s',
  })
  const backlog = meter.createObservableGauge(METRIC.laneBacklog, {
    description: 'Calls waiting in each lane (fresh calls and retries).',
    unit: '{call}',
  })

  const offs = [
    source.on('attempt', (event) => {
      const scoped = { ...extra, [SCOPE_ATTRIBUTE]: event.scope }
      attempts.add(1, { ...scoped, [RESEND_COUNT]: event.attempt - 1 })
      wait.record(Math.max(0, event.waitedMs) / 1000, scoped)
    }),
    source.on('throttled', (event) => {
      throttled.add(1, { ...extra, [SCOPE_ATTRIBUTE]: event.scope, [STATUS_CODE]: event.status })
    }),
    source.on('give-up', (event) => {
      const attributes: Attributes = { ...extra, [SCOPE_ATTRIBUTE]: event.scope, [ERROR_TYPE]: event.reason }
      if (event.status > 0) attributes[STATUS_CODE] = event.status
      giveUps.add(1, attributes)
    }),
  ]

  const observeLanes: BatchObservableCallback = (result) => {
    for (const lane of source.stats()) {
      const attributes = { ...extra, [SCOPE_ATTRIBUTE]: lane.scope }
      if (Number.isFinite(lane.ratePerSecond)) result.observe(rate, lane.ratePerSecond, attributes)
      result.observe(backlog, lane.queued, attributes)
    }
  }
  meter.addBatchObservableCallback(observeLanes, [rate, backlog])

  let stopped = false
  return {
    stop() {
      if (stopped) return
      stopped = true
      for (const off of offs) off()
      meter.removeBatchObservableCallback(observeLanes, [rate, backlog])
    },
  }
}
