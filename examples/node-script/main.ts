// A Node batch job against a shared, rate-limited API: 2,000 items, 16 at a time
// (p-queue), first through polite-fetch (`install()` + the global fetch), then with
// p-retry's exponential backoff; the closing summary compares attempts and 429s.
//
//   npx tsx examples/node-script/main.ts                       # local quota server, both variants
//   npx tsx examples/node-script/main.ts --items 250 --time-scale 40 --json   
//   npx tsx examples/node-script/main.ts --workers 4           # 4 processes, one quota, ATB each
//   npx tsx examples/node-script/main.ts --workers 4 --telemetry local   # …coordinated through AATB telemetry
//   npx tsx examples/node-script/main.ts --state ./.polite-state.json --port 8790   # a cron job resumes its rate
//
// Flags: --items N (2000), --concurrency N (16 per process), --time-scale S (60: the
// local quota, 100 burst + 80/min, runs S times faster), --url URL (use a running
// server instead), --port N (the local quota server's port; default any free one),
// --mode both|polite|p-retry, --workers N, --telemetry URL|local, --state FILE,
// --json (summary as one JSON line on stdout), --quiet (no progress).
//
// The state file keeps one lane per quota scope, the API's origin: a run resumes the rate
// of an earlier run only on the same origin, so with the local server give --port (or --url).
import { fork } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { serve } from '../../src/server/index.js'
import { startQuotaServer, type QuotaServer } from '../../src/sim/quota-server.js'
import type { JobOptions, RunSummary } from './job.js'
import { runWithPRetry } from './run-p-retry.js'
import { localTelemetryOptions } from './local-telemetry.js'
import { runPolite } from './run-polite.js'

type Variant = 'polite' | 'p-retry'

interface Settings {
  items: number
  concurrency: number
  timeScale: number
  url: string | undefined
  port: number
  modes: Variant[]
  workers: number
  telemetryUrl: string | undefined
  statePath: string | undefined
  json: boolean
  quiet: boolean
}

function readSettings(argv: string[]): Settings & { child: boolean; first: number } {
  const { values } = parseArgs({
    args: argv,
    options: {
      items: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '16' },
      'time-scale': { type: 'string', default: '60' },
      url: { type: 'string' },
      port: { type: 'string', default: '0' },
      mode: { type: 'string', default: 'both' },
      workers: { type: 'string', default: '1' },
      telemetry: { type: 'string' },
      state: { type: 'string' },
      json: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      child: { type: 'boolean', default: false },
      first: { type: 'string', default: '0' },
    },
  })
  const count = (name: string, text: string, min: number): number => {
    const n = Number(text)
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got ${text}`)
    return n
  }
  const mode = values.mode
  if (mode !== 'both' && mode !== 'polite' && mode !== 'p-retry') throw new Error(`--mode must be both, polite or p-retry`)
  return {
    items: Math.floor(count('items', values.items, 0)),
    concurrency: Math.floor(count('concurrency', values.concurrency, 1)),
    timeScale: count('time-scale', values['time-scale'], 0.001),
    url: values.url,
    port: Math.floor(count('port', values.port, 0)),
    modes: mode === 'both' ? ['polite', 'p-retry'] : [mode],
    workers: Math.floor(count('workers', values.workers, 1)),
    telemetryUrl: values.telemetry,
    statePath: values.state,
    json: values.json,
    quiet: values.quiet,
    child: values.child,
    first: Math.floor(count('first', values.first, 0)),
  }
}

function runInProcess(variant: Variant, job: JobOptions, settings: Settings): Promise<RunSummary> {
  return variant === 'polite'
    ? runPolite({ ...job, statePath: settings.statePath, telemetryUrl: settings.telemetryUrl, clientId: `node-script-${process.pid}` })
    : runWithPRetry({ ...job, timeScale: settings.timeScale })
}

/** Several worker processes of one job, one quota: fork, split the items, add up. */
async function runWorkers(variant: Variant, url: string, settings: Settings): Promise<RunSummary> {
  const share = Math.ceil(settings.items / settings.workers)
  const children: Promise<RunSummary>[] = []
  const ready: Promise<void>[] = []
  const forked: ReturnType<typeof fork>[] = []
  for (let w = 0; w < settings.workers; w++) {
    const first = w * share
    const items = Math.max(0, Math.min(share, settings.items - first))
    const args = ['--child', '--mode', variant, '--url', url, '--first', String(first), '--items', String(items),
      '--concurrency', String(settings.concurrency), '--time-scale', String(settings.timeScale), '--quiet']
    if (settings.telemetryUrl) args.push('--telemetry', settings.telemetryUrl)
    // One state file per worker: their learned rates are each worker's share.
    if (settings.statePath) args.push('--state', `${settings.statePath}.${w}`)
    const child = fork(fileURLToPath(import.meta.url), args, { execArgv: process.execArgv })
    forked.push(child)
    const messages = messagesOf(child, w)
    ready.push(messages.next().then(() => undefined))
    children.push(messages.next().then((summary) => summary as RunSummary))
  }
  // Start together: process start-up (seconds under tsx) must not stagger the workers.
  await Promise.all(ready)
  const start = performance.now()
  for (const child of forked) child.send('go')
  const summaries = await Promise.all(children)
  return {
    name: summaries[0]?.name ?? variant,
    items: settings.items,
    failed: sum(summaries, 'failed'),
    attempts: sum(summaries, 'attempts'),
    throttled: sum(summaries, 'throttled'),
    durationMs: performance.now() - start,
  }
}

/** The child's IPC messages in order; rejects if it exits before sending the next one. */
function messagesOf(child: ReturnType<typeof fork>, index: number): { next(): Promise<unknown> } {
  const queue: unknown[] = []
  const waiting: { resolve(m: unknown): void; reject(e: Error): void }[] = []
  let exited: Error | undefined
  child.on('message', (message) => {
    const waiter = waiting.shift()
    if (waiter) waiter.resolve(message)
    else queue.push(message)
  })
  child.once('exit', (code) => {
    exited = new Error(`worker ${index} exited with ${code} before reporting`)
    for (const waiter of waiting.splice(0)) waiter.reject(exited)
  })
  return {
    next() {
      if (queue.length > 0) return Promise.resolve(queue.shift())
      if (exited) return Promise.reject(exited)
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
    },
  }
}

function sum(summaries: RunSummary[], key: 'failed' | 'attempts' | 'throttled'): number {
  return summaries.reduce((total, s) => total + s[key], 0)
}

async function resetServer(local: QuotaServer | undefined, url: string): Promise<void> {
  if (local) local.reset()
  else await fetch(`${url}/__reset`, { method: 'POST' }).then((r) => r.arrayBuffer()).catch(() => undefined)
}

function printTable(runs: RunSummary[], settings: Settings, url: string): void {
  const out = process.stdout
  out.write(`\n${settings.items} items, concurrency ${settings.concurrency} × ${settings.workers} process(es), ${url}` +
    `${settings.url ? '' : ` (quota 100 burst + 80/min, time ×${settings.timeScale})`}\n\n`)
  out.write('| variant      | attempts | 429s | failed | duration |\n')
  out.write('|--------------|---------:|-----:|-------:|---------:|\n')
  for (const r of runs) {
    out.write(`| ${r.name.padEnd(12)} | ${String(r.attempts).padStart(8)} | ${String(r.throttled).padStart(4)} | ` +
      `${String(r.failed).padStart(6)} | ${(r.durationMs / 1000).toFixed(1).padStart(7)}s |\n`)
  }
  const [polite, baseline] = [runs.find((r) => r.name === 'polite-fetch'), runs.find((r) => r.name === 'p-retry')]
  if (polite && baseline && baseline.throttled > 0) {
    out.write(`\npolite-fetch sent ${(100 * (1 - polite.throttled / baseline.throttled)).toFixed(0)}% fewer 429s ` +
      `and ${(100 * (1 - polite.attempts / baseline.attempts)).toFixed(0)}% fewer attempts than p-retry.\n`)
  }
}

export interface ExampleResult {
  items: number
  workers: number
  timeScale: number
  runs: RunSummary[]
}

/** Run the example with these command-line flags; prints progress and the summary, and returns it. */
export async function runExample(argv: string[]): Promise<ExampleResult | undefined> {
  const settings = readSettings(argv)
  if (settings.child) {
    // A forked worker: run one share and report to the parent.
    const variant = settings.modes[0]!
    const job: JobOptions = { url: settings.url!, first: settings.first, items: settings.items,
      concurrency: settings.concurrency, label: variant, quiet: true }
    await new Promise<void>((resolve) => process.send!('ready', () => resolve()))
    await new Promise<void>((resolve) => process.once('message', () => resolve()))
    const summary = await runInProcess(variant, job, settings)
    await new Promise<void>((resolve) => process.send!(summary, () => resolve()))
    process.disconnect()
    return undefined
  }

  if (settings.statePath && !settings.url && settings.port === 0) {
    process.stderr.write('note: --state without --port or --url: the local quota server gets a new port, so a new ' +
      'origin, each run, and the next run will not find this lane in the state file\n')
  }
  const local = settings.url ? undefined : await startQuotaServer({ feedback: 'status-only', timeScale: settings.timeScale, port: settings.port })
  const url = settings.url ?? local!.url
  // `--telemetry local`: a telemetry endpoint in this process for the workers to share.
  let telemetryServer: Awaited<ReturnType<typeof serve>> | undefined
  const runs: RunSummary[] = []
  try {
    if (settings.telemetryUrl === 'local') {
      telemetryServer = await serve({ port: 0, options: localTelemetryOptions(url, settings.timeScale) })
      settings.telemetryUrl = telemetryServer.url
    }
    for (const variant of settings.modes) {
      await resetServer(local, url)
      const job: JobOptions = { url, first: 0, items: settings.items, concurrency: settings.concurrency,
        label: variant === 'polite' ? 'polite-fetch' : 'p-retry', quiet: settings.quiet }
      runs.push(settings.workers > 1 ? await runWorkers(variant, url, settings) : await runInProcess(variant, job, settings))
    }
  } finally {
    await local?.close()
    await telemetryServer?.close()
  }
  const result: ExampleResult = { items: settings.items, workers: settings.workers, timeScale: settings.timeScale, runs }
  if (settings.json) process.stdout.write(JSON.stringify(result) + '\n')
  else printTable(runs, settings, url)
  return result
}

// Run when executed (`npx tsx examples/node-script/main.ts`), not when imported by a test.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runExample(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
