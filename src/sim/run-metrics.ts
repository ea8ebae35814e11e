// What one simulated run measured, in the paper's terms (algorithms.md §6.3):
// completion = last success − first attempt; response time = success − arrival;
// 429s = attempts − requests.
import { jainIndex, percentile } from './statistics.js'

export interface RunMetrics {
  requests: number
  /** Requests that succeeded (= requests unless the run was cut off). */
  completed: number
  attempts: number
  throttled: number
  completionMs: number
  meanResponseMs: number
  responseP50Ms: number
  responseP95Ms: number
  responseP99Ms: number
  /** Jain's index over clients' mean response times (1 = every client waited alike). */
  fairness: number
  telemetryMessages: number
  /** True when the run hit its virtual-time limit before every request succeeded. */
  incomplete: boolean
  /** Admitted and rejected attempts per second from the run's origin, when asked for. */
  timeline?: { admitted: number[]; rejected: number[] }
}

export interface RunRecord {
  /** Each client's requests are [offset, offset + count) in the flat arrays. */
  clients: Array<{ offset: number; count: number }>
  arrival: ArrayLike<number>
  /** NaN for a request never sent. */
  firstAttempt: ArrayLike<number>
  /** NaN for a request that never succeeded. */
  success: ArrayLike<number>
  attempts: number
  throttled: number
  telemetryMessages: number
  incomplete: boolean
  timeline?: { admitted: number[]; rejected: number[] }
}

export function summarizeRun(record: RunRecord): RunMetrics {
  let requests = 0
  for (const c of record.clients) requests += c.count
  const responses = new Float64Array(requests)
  const clientMeans: number[] = []
  let firstAttempt = Infinity
  let lastSuccess = -Infinity
  let completed = 0
  let total = 0
  for (const c of record.clients) {
    let clientSum = 0
    let clientCount = 0
    for (let r = c.offset; r < c.offset + c.count; r++) {
      const first = record.firstAttempt[r]!
      if (first < firstAttempt) firstAttempt = first
      const success = record.success[r]!
      if (Number.isNaN(success)) continue
      if (success > lastSuccess) lastSuccess = success
      const response = success - record.arrival[r]!
      responses[completed++] = response
      clientSum += response
      clientCount++
      total += response
    }
    if (clientCount > 0) clientMeans.push(clientSum / clientCount)
  }
  const sorted = responses.subarray(0, completed).sort()
  const metrics: RunMetrics = {
    requests,
    completed,
    attempts: record.attempts,
    throttled: record.throttled,
    completionMs: completed > 0 ? lastSuccess - firstAttempt : NaN,
    meanResponseMs: completed > 0 ? total / completed : NaN,
    responseP50Ms: percentile(sorted, 50),
    responseP95Ms: percentile(sorted, 95),
    responseP99Ms: percentile(sorted, 99),
    fairness: jainIndex(clientMeans),
    telemetryMessages: record.telemetryMessages,
    incomplete: record.incomplete,
  }
  if (record.timeline) metrics.timeline = record.timeline
  return metrics
}
