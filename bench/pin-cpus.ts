// Loopback benchmarks run a client and a server process on one small machine. Left to
// the scheduler, the two share cores by chance: a round in which the server lands on the
// client's core runs up to a third slower, and which side of a pair gets such rounds is
// luck. Pinning the client (all its threads) to one core and the server to another
// makes every round see the same machine. Linux with `taskset` and at least 2 cores
// only; anywhere else the benchmark runs unpinned and says so.
import { execFileSync } from 'node:child_process'
import { availableParallelism, platform } from 'node:os'

export interface Pinning {
  pinned: boolean
  /** What was done, or why not. */
  detail: string
}

export function pinClientAndServer(serverPid: number | undefined): Pinning {
  if (platform() !== 'linux') return { pinned: false, detail: 'not Linux' }
  const cores = availableParallelism()
  if (cores < 2) return { pinned: false, detail: `${cores} core` }
  if (serverPid === undefined) return { pinned: false, detail: 'no server pid' }
  try {
    // -a: every thread of the process (V8's GC helpers and libuv's pool included).
    execFileSync('taskset', ['-a', '-pc', '0', String(process.pid)], { stdio: 'ignore' })
    execFileSync('taskset', ['-a', '-pc', '1', String(serverPid)], { stdio: 'ignore' })
  } catch (error) {
    return { pinned: false, detail: `taskset failed: ${(error as Error).message.split('\n')[0]}` }
  }
  return { pinned: true, detail: 'client on core 0, server on core 1 (taskset)' }
}
