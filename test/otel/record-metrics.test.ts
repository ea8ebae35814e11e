// The metrics as an operator's OpenTelemetry SDK sees them: a real MeterProvider with the
// SDK's in-memory exporter, a real client and a real HTTP server on 127.0.0.1.
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Client, createClient } from '../../src/client/create-client.js'
import { METER_NAME, METRIC, recordMetrics, SCOPE_ATTRIBUTE } from '../../src/otel/index.js'
import { type LocalServer, startLocalServer } from '../helpers/local-server.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'

let server: LocalServer
let client: Client
let exporter: InMemoryMetricExporter
let reader: PeriodicExportingMetricReader
let provider: MeterProvider

beforeEach(async () => {
  server = await startLocalServer()
  exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  // Exported only when the test asks (forceFlush), never on the interval.
  reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  provider = new MeterProvider({ readers: [reader] })
  // Paces at one attempt per 10 ms once it has seen congestion: its rate is a finite gauge.
  // No route splits: `GET /a`'s two 429s make it the lane's candidate, and `GET /b` queued behind
  // the 10 ms spacing puts it on trial in a lane of its own, a gauge more, but only when `/b`
  // arrives within those 10 ms, which the machine's speed decides, not the test.
  client = createClient({ strategy: recordingStrategy({ intervalMs: 10 }), errorBackoffBaseMs: 1, errorBackoffMaxMs: 2, learnRouteSplits: false })
})

afterEach(async () => {
  await client.close()
  await server.close()
  await provider.shutdown()
})

async function collect(): Promise<Map<string, MetricData>> {
  exporter.reset()
  await reader.forceFlush()
  const byName = new Map<string, MetricData>()
  for (const resource of exporter.getMetrics()) {
    for (const scope of resource.scopeMetrics) {
      if (scope.scope.name !== METER_NAME) continue
      for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric)
    }
  }
  return byName
}

/** Each data point's value by the listed attributes (`a=1,b=2`). */
function points(metric: MetricData | undefined, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const point of metric?.dataPoints ?? []) {
    const key = keys.map((k) => `${k}=${String(point.attributes[k])}`).join(',')
    out[key] = metric?.dataPointType === DataPointType.HISTOGRAM ? (point.value as { count: number }).count : point.value
  }
  return out
}

describe('recordMetrics', () => {
  it('counts attempts by resend count, 429s, give-ups by reason, waits, and each lane’s rate and backlog', async () => {
    recordMetrics(client, { meterProvider: provider })
    const scope = server.origin
    server.reply({ status: 429, headers: { 'retry-after': '0' } }, { status: 429 })
    server.reply({ status: 200, body: 'ok' })
    expect((await client.fetch(`${scope}/a`)).status).toBe(200) // three attempts: 429, 429, 200
    server.reply({ status: 503, headers: { 'x-should-retry': 'false' } })
    expect((await client.fetch(`${scope}/b`)).status).toBe(503) // the server said not to retry

    const metrics = await collect()
    const attempts = metrics.get(METRIC.attempts)
    expect(attempts?.descriptor.unit).toBe('{attempt}')
    expect(points(attempts, [SCOPE_ATTRIBUTE, 'http.request.resend_count'])).toEqual({
      [`${SCOPE_ATTRIBUTE}=${scope},http.request.resend_count=0`]: 2,
      [`${SCOPE_ATTRIBUTE}=${scope},http.request.resend_count=1`]: 1,
      [`${SCOPE_ATTRIBUTE}=${scope},http.request.resend_count=2`]: 1,
    })
    expect(points(metrics.get(METRIC.throttled), ['http.response.status_code'])).toEqual({
      'http.response.status_code=429': 2,
      'http.response.status_code=503': 1,
    })
    expect(points(metrics.get(METRIC.giveUps), [SCOPE_ATTRIBUTE, 'error.type', 'http.response.status_code'])).toEqual({
      [`${SCOPE_ATTRIBUTE}=${scope},error.type=server-no-retry,http.response.status_code=503`]: 1,
    })
    const wait = metrics.get(METRIC.waitDuration)
    expect(wait?.descriptor.unit).toBe('s')
    expect(wait?.dataPointType).toBe(DataPointType.HISTOGRAM)
    expect(points(wait, [SCOPE_ATTRIBUTE])).toEqual({ [`${SCOPE_ATTRIBUTE}=${scope}`]: 4 })
    // Paced since the first 429: one attempt per 10 ms.
    expect(points(metrics.get(METRIC.laneRate), [SCOPE_ATTRIBUTE])).toEqual({ [`${SCOPE_ATTRIBUTE}=${scope}`]: 100 })
    expect(points(metrics.get(METRIC.laneBacklog), [SCOPE_ATTRIBUTE])).toEqual({ [`${SCOPE_ATTRIBUTE}=${scope}`]: 0 })
  })

  it('reports no rate for a lane that is not pacing, adds the given attributes, and counts nothing after stop()', async () => {
    const recording = recordMetrics(client, { meterProvider: provider, attributes: { 'service.name': 'test' } })
    await (await client.fetch(`${server.origin}/a`)).text()
    let metrics = await collect()
    expect(points(metrics.get(METRIC.attempts), ['service.name'])).toEqual({ 'service.name=test': 1 })
    expect(metrics.get(METRIC.laneRate)?.dataPoints ?? []).toEqual([])
    expect(points(metrics.get(METRIC.laneBacklog), [SCOPE_ATTRIBUTE])).toEqual({ [`${SCOPE_ATTRIBUTE}=${server.origin}`]: 0 })

    recording.stop()
    recording.stop() // idempotent
    await (await client.fetch(`${server.origin}/b`)).text()
    metrics = await collect()
    // Cumulative, unchanged: the second call was not counted.
    expect(points(metrics.get(METRIC.attempts), ['service.name'])).toEqual({ 'service.name=test': 1 })
  })
})
