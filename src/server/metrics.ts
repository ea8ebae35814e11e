// Counters for `/metrics`, rendered as Prometheus text exposition (version 0.0.4).
export interface TelemetryMetrics {
  countRequest(route: string, status: number): void
  countReport(throttled: boolean): void
  render(gauges: Record<string, number>): string
}

export function createMetrics(): TelemetryMetrics {
  // route -> status -> count: nested so counting a request builds no label string (hot path).
  const requests = new Map<string, Map<number, number>>()
  let reports = 0
  let throttledReports = 0
  return {
    countRequest(route, status) {
      let byStatus = requests.get(route)
      if (!byStatus) requests.set(route, (byStatus = new Map()))
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
    },
    countReport(throttled) {
      reports++
      if (throttled) throttledReports++
    },
    render(gauges) {
      const lines = [
        '# HELP polite_telemetry_requests_total HTTP requests by route and status.',
        '# TYPE polite_telemetry_requests_total counter',
      ]
      for (const [route, byStatus] of requests) {
        for (const [status, count] of byStatus) lines.push(`polite_telemetry_requests_total{route="${route}",status="${status}"} ${count}`)
      }
      lines.push(
        '# HELP polite_telemetry_reports_total Reports accepted.',
        '# TYPE polite_telemetry_reports_total counter',
        `polite_telemetry_reports_total ${reports}`,
        '# HELP polite_telemetry_throttled_reports_total Accepted reports carrying at least one 429.',
        '# TYPE polite_telemetry_throttled_reports_total counter',
        `polite_telemetry_throttled_reports_total ${throttledReports}`,
      )
      for (const [name, value] of Object.entries(gauges)) {
        const metric = `polite_telemetry_${name.replace(/[^a-zA-Z0-9_]/g, '_')}`
        lines.push(`# TYPE ${metric} gauge`, `${metric} ${value}`)
      }
      return `${lines.join('\n')}\n`
    },
  }
}
