// Runs the quota server as its own process:
//   tsx src/sim/quota-server-main.ts --port 8080 --feedback ratelimit --time-scale 10
// The first line on stdout is the URL, alone, so a parent process can read it and go.
// Flags: --port, --host, --kind, --feedback, --capacity, --per-minute, --refill
// (continuous|stepped), --step-ms, --time-scale, and repeatable
// --endpoint "POST /products 2 [capacity]" (per-second limit under the global one).
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isFeedback, startQuotaServer, type QuotaServer, type QuotaServerOptions } from './quota-server.js'
import type { EndpointLimit } from './servers/endpoint-limits.js'
import { isServerKind } from './servers/index.js'
import type { QuotaConfig } from './types.js'

export function parseQuotaServerArgs(argv: readonly string[]): QuotaServerOptions {
  const options: QuotaServerOptions = {}
  const quota: Partial<QuotaConfig> = {}
  const endpoints: EndpointLimit[] = []
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const eq = flag.indexOf('=')
    const name = eq === -1 ? flag : flag.slice(0, eq)
    const value = (): string => {
      const v = eq === -1 ? argv[++i] : flag.slice(eq + 1)
      if (v === undefined) throw new Error(`${name} needs a value`)
      return v
    }
    switch (name) {
      case '--port':
        options.port = integer(name, value())
        break
      case '--host':
        options.host = value()
        break
      case '--kind': {
        const v = value()
        if (!isServerKind(v)) throw new Error(`--kind: unknown server kind ${v}`)
        options.kind = v
        break
      }
      case '--feedback': {
        const v = value()
        if (!isFeedback(v)) throw new Error(`--feedback: unknown mode ${v}`)
        options.feedback = v
        break
      }
      case '--refill': {
        const v = value()
        if (v !== 'continuous' && v !== 'stepped') throw new Error(`--refill: continuous or stepped, got ${v}`)
        options.refill = v
        break
      }
      case '--capacity':
        quota.capacity = positive(name, value())
        break
      case '--per-minute':
        quota.perMinute = positive(name, value())
        break
      case '--step-ms':
        quota.stepIntervalMs = positive(name, value())
        break
      case '--time-scale':
        options.timeScale = positive(name, value())
        break
      case '--endpoint':
        endpoints.push(endpointArg(value()))
        break
      default:
        throw new Error(`unknown flag ${flag}`)
    }
  }
  if (Object.keys(quota).length > 0) options.quota = quota
  if (endpoints.length > 0) options.endpoints = endpoints
  return options
}

/** Starts the server from argv, prints its URL, and closes it on SIGINT/SIGTERM. */
export async function main(argv: readonly string[]): Promise<QuotaServer> {
  const server = await startQuotaServer(parseQuotaServerArgs(argv))
  process.stdout.write(`${server.url}\n`)
  const stop = (): void => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return server
}

function endpointArg(spec: string): EndpointLimit {
  const [method, path, perSecond, capacity, extra] = spec.trim().split(/\s+/)
  if (method === undefined || path === undefined || perSecond === undefined || extra !== undefined) {
    throw new Error(`--endpoint: expected "METHOD /path perSecond [capacity]", got "${spec}"`)
  }
  const limit: EndpointLimit = { method, path, perSecond: positive('--endpoint perSecond', perSecond) }
  if (capacity !== undefined) limit.capacity = positive('--endpoint capacity', capacity)
  return limit
}

function positive(name: string, raw: string): number {
  const n = Number(raw)
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`${name}: expected a positive number, got ${raw}`)
  return n
}

function integer(name: string, raw: string): number {
  const n = Number(raw)
  if (!(Number.isInteger(n) && n >= 0 && n < 65_536)) throw new Error(`${name}: expected a port number, got ${raw}`)
  return n
}

const invokedPath = process.argv[1]
if (invokedPath !== undefined && resolve(invokedPath) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`quota-server: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(2)
  })
}
