// Instructions per report of the telemetry server, counted by valgrind's callgrind: the one
// per-report cost on this shared VM that other processes' load does not move.
//
// The server (bench/telemetry-instructions-server.mjs: bench:telemetry's memory-store server
// from a given build) runs under callgrind; this process drives it with bench:telemetry's
// fleet (8 connections from 127.0.3.x, 16 pipelined, the same 1,000 report bodies), closed
// loop and counted: a warm-up of WARMUP reports, counters zeroed (callgrind_control -z),
// COUNT reports, counters dumped. Under valgrind the server is the bottleneck by far, so
// every read holds a full pipeline, as in the saturated bench. Counted: user-space
// instructions of every server thread (JIT code, GC, node:http, V8's compiler threads);
// not counted: the kernel's side of the syscalls.
//
//   npx tsx bench/telemetry-instructions.ts <server dir | bare> [count] [warmup]
//   e.g. npx tsx bench/telemetry-instructions.ts /tmp/base/dist/src/server 20000 20000
import { spawn, execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, rmSync, mkdtempSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_CLIENTS, contentLength, reportBody, serialisePost } from './telemetry-load.js'

const [dir, countArg, warmupArg] = process.argv.slice(2)
if (!dir) {
  console.error('usage: tsx bench/telemetry-instructions.ts <server dir> [count] [warmup]')
  process.exit(2)
}
const COUNT = Number(countArg ?? 20_000)
const WARMUP = Number(warmupArg ?? 20_000)
const CONNECTIONS = 8
const DEPTH = 16
const CRLF2 = Buffer.from('\r\n\r\n')

const out = mkdtempSync(join(tmpdir(), 'tele-callgrind-'))
// PROFILE_DIR=<dir>: no valgrind; the server runs under `node --cpu-prof` and writes its profile there.
const PROFILE_DIR = process.env.PROFILE_DIR
const serverScript = new URL('./telemetry-instructions-server.mjs', import.meta.url).pathname
// STRACE_OUT=<file>: no valgrind; the server runs under `strace -f -c` (syscall counts per report).
const STRACE_OUT = process.env.STRACE_OUT
const server = STRACE_OUT
  ? spawn('strace', [...(process.env.STRACE_FULL ? [] : ['-c']), '-f', '-o', STRACE_OUT, 'node', new URL('./telemetry-instructions-server.mjs', import.meta.url).pathname, dir], { stdio: ['ignore', 'pipe', 'pipe'] })
  : PROFILE_DIR
  ? spawn('node', ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, serverScript, dir], { stdio: ['ignore', 'pipe', 'pipe'] })
  : spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}/callgrind.out.%p`, '--dump-instr=no', 'node', serverScript, dir], { stdio: ['ignore', 'pipe', 'pipe'] })
let stderr = ''
server.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
const port = await new Promise<number>((resolve, reject) => {
  server.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())))
  server.once('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)))
})

const headers = { 'content-type': 'application/json', authorization: 'Bearer bench-token' }
const requests = Array.from({ length: BENCH_CLIENTS }, (_, i) => serialisePost(`127.0.0.1:${port}`, '/v1/report', headers, reportBody(i)))
const perConnection = Array.from({ length: CONNECTIONS }, (_, c) => requests.filter((_, i) => i % CONNECTIONS === c))
const sockets = await Promise.all(perConnection.map((_, c) => new Promise<ReturnType<typeof connect>>((resolve) => {
  const socket = connect({ host: '127.0.0.1', port, localAddress: `127.0.3.${c + 1}`, noDelay: true }, () => resolve(socket))
})))

/** Send `total` reports over the connections (DEPTH in flight each), resolve with [ok, other] once all are answered. */
function drive(total: number): Promise<[number, number]> {
  let ok = 0
  let other = 0
  return Promise.all(sockets.map((socket, c) => new Promise<void>((resolve) => {
    const own = perConnection[c]!
    const quota = Math.floor(total / CONNECTIONS) + (c < total % CONNECTIONS ? 1 : 0)
    let sent = 0
    let answered = 0
    let next = 0
    let pending: Buffer | undefined
    const send = (n: number) => {
      socket.cork()
      for (let i = 0; i < n && sent < quota; i++, sent++) {
        socket.write(own[next]!)
        next = (next + 1) % own.length
      }
      socket.uncork()
    }
    const onData = (chunk: Buffer) => {
      const buffer = pending ? Buffer.concat([pending, chunk]) : chunk
      pending = undefined
      let offset = 0
      while (offset < buffer.length) {
        const end = buffer.indexOf(CRLF2, offset)
        if (end < 0) break
        const head = buffer.toString('latin1', offset, end + 2)
        const total = end + 4 + Math.max(0, contentLength(head)) - offset
        if (offset + total > buffer.length) break
        if (head.startsWith('HTTP/1.1 200')) ok++
        else other++
        answered++
        offset += total
      }
      if (offset < buffer.length) pending = buffer.subarray(offset)
      if (answered === quota) {
        socket.off('data', onData)
        resolve()
      } else if (sent - answered <= DEPTH / 2) send(DEPTH - (sent - answered))
    }
    socket.on('data', onData)
    if (quota === 0) resolve()
    else send(DEPTH)
  }))).then(() => [ok, other])
}

const control = (flag: string) => { if (!PROFILE_DIR && !STRACE_OUT) execFileSync('callgrind_control', [flag, String(server.pid)], { stdio: 'ignore' }) }
const warm = await drive(WARMUP)
control('-z')
const [ok, other] = await drive(COUNT)
control('-d')
for (const socket of sockets) socket.destroy()
server.kill('SIGINT')
await new Promise((resolve) => server.once('exit', resolve))

// The dump after -z holds the measured phase; the one written at exit holds only the tail.
let instructions = 0
const dumps = readdirSync(out).filter((name) => /\.\d+$/.test(name) && !name.endsWith('.0'))
for (const name of dumps) {
  const text = readFileSync(join(out, name), 'utf8')
  if (!/^desc: Trigger: dump/m.test(text)) continue
  instructions += Number(/^summary: (\d+)/m.exec(text)?.[1] ?? /^totals: (\d+)/m.exec(text)?.[1] ?? 0)
}
// KEEP_DUMP=1 keeps callgrind's files (for callgrind_annotate) and prints where.
if (process.env.KEEP_DUMP) console.log(`callgrind files in ${out}`)
else rmSync(out, { recursive: true, force: true })
if (other > 0 || ok !== COUNT) console.log(`warning: ${other} answers were not 200 (warm-up: ${warm[1]})`)
console.log(`${dir}: ${(instructions / COUNT).toFixed(0)} instructions per report (${COUNT} reports after ${WARMUP} warm-up; ${instructions} in all; ${ok} answered 200)`)
