// A cheap HTTP/1.1 load generator for bench/telemetry.ts, run in a SECOND process.
//
// Why not fetch/undici: at ~10k req/s on this 2-core machine the client's own per-request
// cost (promises, header objects, body streams) saturated its core before a bare node:http
// server did, so the bench measured the client. Here every request is serialised once up
// front; each connection keeps up to `depth` requests pipelined (node:http answers pipelined
// requests in order) and refills in batches once half of them have been answered, so one
// write carries many requests; responses are parsed minimally: status line + Content-Length.
// Latency is from the write of a request to the last byte of its response, so it includes pipeline queueing.
import { connect } from 'node:net'
import type { Socket } from 'node:net'

export interface LoadOptions {
  host: string
  port: number
  /** Pre-serialised requests, cycled through in order (each connection starts at its own offset). */
  requests: readonly Buffer[]
  connections: number
  /** Requests pipelined per connection (in flight = connections × depth). */
  depth: number
  durationMs: number
  /** Load sent before the measurement starts (JIT warm-up, connection set-up); not counted. */
  warmupMs: number
  /** Latency samples kept (the rest of the requests are still counted). */
  maxSamples: number
  /**
   * Per connection (index = connection): the local address it connects from and the requests it
   * cycles through instead of `requests`, so a load can look like a fleet on many addresses.
   */
  perConnection?: readonly { localAddress: string; requests: readonly Buffer[] }[]
}

export interface LoadResult {
  requests: number
  ok: number
  failed: number
  elapsedMs: number
  p50Ms: number
  p99Ms: number
  /** CPU the load process itself used, as a share of one core over the run (1 = a full core). */
  loaderCpuShare: number
}

const CRLF2 = Buffer.from('\r\n\r\n')

/** Client ids and scopes of the bench's fleet. */
export const BENCH_CLIENTS = 1_000
const BENCH_SCOPES = 10

/** The bench's i-th report body: every client id appears, spread over all scopes. */
export function reportBody(i: number): string {
  return JSON.stringify({
    v: 1, scope: `https://api-${i % BENCH_SCOPES}.example.com`, clientId: `client-${(i * 7919) % BENCH_CLIENTS}`,
    attempts: 1 + (i % 30), throttled: i % 11 === 0 ? 1 : 0, backlog: i % 5,
  })
}

/** `POST path` with a JSON body, serialised once. */
export function serialisePost(host: string, path: string, headers: Record<string, string>, body: string): Buffer {
  const bytes = Buffer.from(body)
  let head = `POST ${path} HTTP/1.1\r\nhost: ${host}\r\ncontent-length: ${bytes.length}\r\n`
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  return Buffer.concat([Buffer.from(`${head}\r\n`), bytes])
}

/** Content-Length from a response head (latin1), or -1 when absent. */
export function contentLength(head: string): number {
  const lower = head.toLowerCase()
  const at = lower.indexOf('\r\ncontent-length:')
  if (at < 0) return -1
  const end = lower.indexOf('\r\n', at + 2)
  return Number.parseInt(lower.slice(at + 17, end < 0 ? undefined : end).trim(), 10)
}

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const samples = new Float64Array(options.maxSamples)
  let sampleCount = 0
  let issued = 0
  let ok = 0
  let failed = 0
  let cpuStart = process.cpuUsage()
  setTimeout(() => { cpuStart = process.cpuUsage() }, options.warmupMs).unref()
  const started = performance.now()
  const measureFrom = started + options.warmupMs
  const deadline = measureFrom + options.durationMs

  const refillBatch = Math.max(1, Math.floor(options.depth / 2))

  function drive(index: number): Promise<void> {
    return new Promise((resolve) => {
      const own = options.perConnection?.[index]
      const requests = own?.requests ?? options.requests
      const socket: Socket = connect({ host: options.host, port: options.port, noDelay: true, ...(own ? { localAddress: own.localAddress } : {}) })
      const sentAt: number[] = [] // FIFO of write times of the requests in flight on this connection
      let head = 0 // index into sentAt of the oldest request in flight
      let next = (index * 997) % requests.length
      let pending: Buffer | undefined
      let done = false
      const finish = () => {
        if (done) return
        done = true
        for (let i = head; i < sentAt.length; i++) if (sentAt[i]! >= measureFrom) failed++ // still in flight when the connection ended
        socket.destroy()
        resolve()
      }

      const send = (count: number) => {
        const now = performance.now()
        if (now >= deadline) return
        socket.cork()
        for (let i = 0; i < count; i++) {
          socket.write(requests[next]!)
          next = next + 1 === requests.length ? 0 : next + 1
          sentAt.push(now)
          if (now >= measureFrom) issued++
        }
        process.nextTick(() => socket.uncork())
      }

      socket.once('connect', () => send(options.depth))
      socket.on('data', (chunk: Buffer) => {
        let buffer = pending ? Buffer.concat([pending, chunk]) : chunk
        pending = undefined
        let completed = 0
        let offset = 0
        const now = performance.now()
        while (offset < buffer.length) {
          const end = buffer.indexOf(CRLF2, offset)
          if (end < 0) break
          const headText = buffer.toString('latin1', offset, end + 2)
          const length = contentLength(headText)
          const total = end + 4 + Math.max(0, length) - offset
          if (offset + total > buffer.length) break
          const t = sentAt[head++] ?? 0
          if (t >= measureFrom) {
            if (headText.startsWith('HTTP/1.1 200')) ok++
            else failed++
            if (sampleCount < samples.length) samples[sampleCount++] = now - t
          }
          completed++
          offset += total
        }
        if (offset < buffer.length) pending = buffer.subarray(offset)
        if (head > 4096) { sentAt.splice(0, head); head = 0 }
        buffer = chunk // drop the reference to the concatenation
        // Refill in batches (once half the pipeline has drained): one write of many requests
        // costs both processes one syscall and one wake-up instead of one per request.
        const inFlight = sentAt.length - head
        if (completed > 0 && inFlight <= options.depth - refillBatch) send(options.depth - inFlight)
        if (sentAt.length === head && performance.now() >= deadline) finish()
      })
      socket.on('error', finish)
      socket.on('close', finish)
    })
  }

  return Promise.all(Array.from({ length: options.connections }, (_, i) => drive(i))).then(() => {
    const elapsedMs = performance.now() - measureFrom
    const cpu = process.cpuUsage(cpuStart)
    const sorted = samples.subarray(0, sampleCount).sort()
    const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
    return {
      requests: issued, ok, failed, elapsedMs,
      p50Ms: quantile(0.5), p99Ms: quantile(0.99),
      loaderCpuShare: (cpu.user + cpu.system) / 1000 / elapsedMs,
    }
  })
}
