// bench:node-ab — the client CPU of `politeAgent`'s success path, compared between checkouts
// of this repository in ONE process. bench:node compares politeAgent with a plain Agent; two
// checkouts compared through two bench:node runs differ by the host's load between the runs
// (on the shared 2-core VM, ±1–3 µs per request, as large as the difference looked for). Here
// every checkout's `src/node` is imported side by side (distinct paths, so distinct modules)
// and the subjects take turns in short slices, the order reversed every pass, as in bench:node;
// the figure is the median, over slices, of each checkout's CPU per request minus the bare
// dispatcher's (or the plain Agent's) in the same pass.
//  - `--mode fake` (default): the dispatcher under politeAgent answers 200 itself, in batches of
//    one setImmediate (as one socket read delivers several responses), with the headers a Node
//    server sends: only polite-fetch's own work is measured, to about ±20 ns.
//  - `--mode loopback`: a real undici Agent and the bench:node server in another process.
// Usage: npx tsx bench/node-ab.ts [--mode fake|loopback] [--passes 40] [--slice-ms 250] <checkout dir>...
// e.g. git worktree add /tmp/old <commit> && ln -s "$PWD/node_modules" /tmp/old/node_modules
//      npx tsx bench/node-ab.ts /tmp/old .
import { fork } from 'node:child_process'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { Agent, Dispatcher, request } from 'undici'
import { pinClientAndServer } from './pin-cpus.js'

const CONCURRENCY = 64
const WARM_MS = 1500

const RAW_HEADERS = ['Content-Type', 'application/json', 'Content-Length', '11', 'Date', new Date().toUTCString(), 'Connection', 'keep-alive', 'Keep-Alive', 'timeout=60'].map((text) => Buffer.from(text, 'latin1'))
const BODY = Buffer.from('{"ok":true}')
// undici's parser hands an empty list when there are no trailers (typed string[] there).
const NO_TRAILERS: string[] = []

function noop(): void {}

/** Answers every dispatch with a 200, the dispatches of one turn of the event loop together. */
class AnsweringDispatcher extends Dispatcher {
  #pending: Dispatcher.DispatchHandler[] = []

  override dispatch(_opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#pending.length === 0) setImmediate(() => this.#answer())
    this.#pending.push(handler)
    return true
  }

  #answer(): void {
    const batch = this.#pending
    this.#pending = []
    for (const handler of batch) {
      handler.onConnect?.(noop)
      handler.onHeaders?.(200, RAW_HEADERS, noop, 'OK')
      handler.onData?.(BODY)
      handler.onComplete?.(NO_TRAILERS)
    }
  }

  override async close(): Promise<void> {}
}

interface Subject {
  name: string
  dispatcher: Dispatcher
  /** CPU ns per request, one entry per slice. */
  cpuNs: number[]
}

type Once = (dispatcher: Dispatcher) => Promise<void>

/** A callback-style dispatch, as `request` makes, without `request`'s own cost. */
function fakeOnce(dispatcher: Dispatcher): Promise<void> {
  return new Promise((done, failed) => {
    dispatcher.dispatch({ origin: 'http://127.0.0.1:3000', path: '/', method: 'GET', headers: {} }, {
      onConnect: noop,
      onHeaders: () => true,
      onData: () => true,
      onComplete: () => done(),
      onError: failed,
    } as Dispatcher.DispatchHandler)
  })
}

function loopbackOnce(url: string): Once {
  return async (dispatcher) => {
    const res = await request(url, { dispatcher })
    await res.body.dump()
  }
}

/** CPU ns per request of CONCURRENCY callers looping for `durationMs`. */
async function slice(once: Once, dispatcher: Dispatcher, durationMs: number): Promise<number> {
  const endAt = performance.now() + durationMs
  let done = 0
  const cpuStart = process.cpuUsage()
  const worker = async (): Promise<void> => {
    while (performance.now() < endAt) {
      await once(dispatcher)
      done++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const cpu = process.cpuUsage(cpuStart)
  return ((cpu.user + cpu.system) * 1000) / done
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function quartiles(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b)
  return `${sorted[Math.floor(sorted.length / 4)]!.toFixed(0)}..${sorted[Math.floor((3 * sorted.length) / 4)]!.toFixed(0)}`
}

/** The reference and the checkouts take turns, the order reversed every pass (no fixed neighbour). */
async function alternate(once: Once, subjects: Subject[], passes: number, sliceMs: number): Promise<void> {
  for (const subject of subjects) await slice(once, subject.dispatcher, WARM_MS)
  for (let pass = 0; pass < passes; pass++) {
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[pass % 2 === 0 ? k : subjects.length - 1 - k]!
      subject.cpuNs.push(await slice(once, subject.dispatcher, sliceMs))
    }
  }
}

function report(subjects: Subject[]): void {
  const [reference, ...checkouts] = subjects as [Subject, ...Subject[]]
  const over = (subject: Subject, base: Subject): number[] => subject.cpuNs.map((ns, i) => ns - base.cpuNs[i]!)
  console.log(`${reference.name}: ${median(reference.cpuNs).toFixed(0)} ns per request`)
  for (const subject of checkouts) {
    console.log(`${subject.name}: ${median(subject.cpuNs).toFixed(0)} ns per request, +${median(over(subject, reference)).toFixed(0)} over ${reference.name} (quartiles ${quartiles(over(subject, reference))})`)
  }
  for (let i = 1; i < checkouts.length; i++) {
    const diff = over(checkouts[i]!, checkouts[0]!)
    console.log(`${checkouts[i]!.name} − ${checkouts[0]!.name}: ${median(diff).toFixed(0)} ns per request (quartiles ${quartiles(diff)})`)
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      mode: { type: 'string', default: 'fake' },
      passes: { type: 'string', default: '40' },
      'slice-ms': { type: 'string', default: '250' },
    },
  })
  if (positionals.length === 0) throw new Error('usage: npx tsx bench/node-ab.ts [--mode fake|loopback] <checkout dir>...')
  const loopback = values.mode === 'loopback'
  const server = loopback ? await startServer() : undefined
  const once = server ? loopbackOnce(server.url) : fakeOnce
  const under = (): Dispatcher => (loopback ? new Agent({ connections: CONCURRENCY }) : new AnsweringDispatcher())
  const subjects: Subject[] = [{ name: loopback ? 'plain Agent' : 'bare dispatcher', dispatcher: under(), cpuNs: [] }]
  for (const dir of positionals) {
    const { politeAgent } = (await import(pathToFileURL(resolve(dir, 'src/node/index.ts')).href)) as typeof import('../src/node/index.js')
    subjects.push({ name: dir, dispatcher: politeAgent({ dispatcher: under() }), cpuNs: [] })
  }
  const loadBefore = loadavg()
  try {
    await alternate(once, subjects, Number(values.passes), Number(values['slice-ms']))
  } finally {
    for (const subject of subjects) await subject.dispatcher.close()
    server?.stop()
  }
  const load = (figures: number[]): string => figures.map((n) => n.toFixed(2)).join(' ')
  console.log(`bench:node-ab --mode ${values.mode}: ${values.passes} passes of ${values['slice-ms']} ms slices, concurrency ${CONCURRENCY}; load ${load(loadBefore)} before, ${load(loadavg())} after${server ? `; ${server.pinning}` : ''}`)
  report(subjects)
}

/** bench:node's server, in its own process (pinned to the other core, as bench:node does). */
async function startServer(): Promise<{ url: string; pinning: string; stop(): void }> {
  const script = fileURLToPath(new URL('./node.ts', import.meta.url))
  const child = fork(script, ['--server'], { execArgv: process.execArgv, stdio: 'inherit' })
  const port = await new Promise<number>((done, failed) => {
    child.once('message', (message) => done((message as { port: number }).port))
    child.once('exit', (code) => failed(new Error(`server process exited with ${code}`)))
  })
  const pinning = pinClientAndServer(child.pid)
  return { url: `http://127.0.0.1:${port}/`, pinning: pinning.detail, stop: () => child.kill() }
}

await main()
