// `polite-fetch telemetry-server`: the AATB telemetry endpoint on node:http.
//   --port 8787  --host 127.0.0.1  [--redis redis://127.0.0.1:6379]
//   [--quota scope=perMinute]…  [--token [tenant=]token:scope1,scope2]…
//   [--trusted-token …]…  [--admin-token token]  [--trust-proxy]  [--window-ms n]
import { parseArgs } from 'node:util'
import { parseTokenArg } from '../server/auth.js'
import type { TenantGrant } from '../server/auth.js'
import type { QuotaRate, TelemetryHandlerOptions } from '../server/handle-telemetry.js'
import { createMemoryStore } from '../server/memory-store.js'
import { createRedisStore } from '../server/redis-store.js'
import { serve } from '../server/serve.js'
import { aggregatorWindows } from '../telemetry/aggregator-windows.js'

const usage = `usage: polite-fetch telemetry-server [options]

  --port <n>                     listen port (default 8787; 0 = any free port)
  --host <addr>                  listen address (default 127.0.0.1)
  --redis <url>                  share aggregates through Redis (default: in memory)
  --quota <scope>=<perMinute>    the scope's quota refill rate (repeatable); scopes
                                 without one use the rate clients learned from RateLimit-Policy
  --token [tenant=]<token>:<scopes>
                                 bearer token allowed to report on comma-separated scopes,
                                 or * for all (repeatable); no --token = open (development only)
  --trusted-token [tenant=]<token>:<scopes>
                                 the same for a token kept secret (a server-side fleet): not bounded
                                 per source address, and its RateLimit-Policy hints set the quota
  --admin-token <token>          the operator's token: it alone reads /metrics, the dashboard's data
                                 (GET / shows the dashboard) and any tenant's aggregate
  --trust-proxy                  take the source address from the last X-Forwarded-For entry
                                 (only behind a reverse proxy you run)
  --window-ms <n>                the window a fleet's attempts and 429s are summed over (default
                                 30000: 40 units of an 80-per-minute refill); size it to 40 units
                                 of your quota's refill (80 per hour: 1800000), docs/telemetry.md
`

export interface ParsedServerArgs {
  port: number
  host: string
  redis?: string
  quotas: Record<string, QuotaRate>
  tokens: Record<string, TenantGrant>
  adminToken?: string
  trustProxy: boolean
  /** The aggregator's report window (the other windows follow it); undefined: the default 30 s. */
  windowMs?: number
}

/** Parse the command line; returns an error message for bad input. */
export function parseServerArgs(argv: string[]): ParsedServerArgs | string {
  let values
  try {
    values = parseArgs({
      args: argv,
      options: {
        port: { type: 'string', default: '8787' },
        host: { type: 'string', default: '127.0.0.1' },
        redis: { type: 'string' },
        quota: { type: 'string', multiple: true, default: [] },
        token: { type: 'string', multiple: true, default: [] },
        'trusted-token': { type: 'string', multiple: true, default: [] },
        'admin-token': { type: 'string' },
        'trust-proxy': { type: 'boolean', default: false },
        'window-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values
  } catch (error) {
    return (error as Error).message
  }
  if (values.help) return 'help'
  const port = Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) return `invalid --port ${values.port}`
  const quotas: Record<string, QuotaRate> = {}
  for (const item of values.quota ?? []) {
    const equals = item.lastIndexOf('=')
    const perMinute = Number(item.slice(equals + 1))
    if (equals <= 0 || !(perMinute > 0) || !Number.isFinite(perMinute)) return `invalid --quota ${item} (want scope=perMinute)`
    quotas[item.slice(0, equals)] = { perMinute }
  }
  const tokens: Record<string, TenantGrant> = {}
  const given = [...(values.token ?? []).map((item) => ({ item, trusted: false })), ...(values['trusted-token'] ?? []).map((item) => ({ item, trusted: true }))]
  for (const [index, { item, trusted }] of given.entries()) {
    const parsed = parseTokenArg(item, index)
    const flag = trusted ? '--trusted-token' : '--token'
    if (!parsed) return `invalid ${flag} ${item} (want [tenant=]token:scope1,scope2)`
    tokens[parsed[0]] = trusted ? { ...parsed[1], trusted: true } : parsed[1]
  }
  const adminToken = values['admin-token']
  if (adminToken !== undefined && (!/^\S+$/.test(adminToken) || Object.hasOwn(tokens, adminToken))) return 'invalid --admin-token (a non-empty token, distinct from every tenant token)'
  const parsed: ParsedServerArgs = { port, host: values.host ?? '127.0.0.1', quotas, tokens, trustProxy: values['trust-proxy'] === true }
  if (adminToken !== undefined) parsed.adminToken = adminToken
  if (values.redis) parsed.redis = values.redis
  if (values['window-ms'] !== undefined) {
    const windowMs = Number(values['window-ms'])
    // At least one whole millisecond per bucket; at most a day (a longer window reads nothing fresh).
    if (!Number.isFinite(windowMs) || windowMs < 15 || windowMs > 86_400_000) return `invalid --window-ms ${values['window-ms']} (want 15 to 86400000)`
    parsed.windowMs = windowMs
  }
  return parsed
}

export async function run(argv: string[]): Promise<number> {
  const args = parseServerArgs(argv)
  if (args === 'help') {
    process.stdout.write(usage)
    return 0
  }
  if (typeof args === 'string') {
    process.stderr.write(`polite-fetch telemetry-server: ${args}\n\n${usage}`)
    return 1
  }
  const windows = args.windowMs === undefined ? {} : aggregatorWindows(args.windowMs)
  const store = args.redis ? createRedisStore({ url: args.redis, ...windows }) : createMemoryStore(windows)
  const options: TelemetryHandlerOptions = { store, quotas: args.quotas, trustProxy: args.trustProxy }
  if (Object.keys(args.tokens).length > 0) options.auth = { tokens: args.tokens }
  if (args.adminToken !== undefined) options.adminToken = args.adminToken
  const server = await serve({ port: args.port, host: args.host, options })
  const mode = Object.keys(args.tokens).length > 0 ? `${Object.keys(args.tokens).length} token(s)` : 'OPEN (no --token: development only)'
  const admin = args.adminToken === undefined ? 'no admin token: /metrics open' : 'admin token set'
  process.stdout.write(`telemetry server on ${server.url} (store: ${args.redis ? 'redis' : 'memory'}, auth: ${mode}, ${admin}; dashboard at ${server.url}/)\n`)
  await new Promise<void>((resolve) => {
    const stop = () => resolve()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  await server.close()
  await store.close?.()
  return 0
}
