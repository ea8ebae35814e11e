// `polite-fetch/otel`: OpenTelemetry metrics for a client or limiter (needs `@opentelemetry/api`).
export { METER_NAME, METRIC, recordMetrics, SCOPE_ATTRIBUTE } from './record-metrics.js'
export type { MetricsRecording, MetricsSource, RecordMetricsOptions } from './record-metrics.js'
