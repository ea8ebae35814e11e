// Runs grid tasks on worker threads, handing out the next task as each one finishes,
// and returns the results in task order (so the output never depends on which worker
// was faster). In a source checkout the worker is TypeScript: it is started with tsx's
// loader, resolved from this package, so it works under tsx, Vitest and the bin alike.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import type { GridSpec } from './grid-spec.js'
import type { TaskResult } from './run-task.js'

type WorkerReply =
  | { type: 'result'; index: number; result: TaskResult }
  | { type: 'error'; index: number; message: string }

export async function runInWorkers(
  spec: GridSpec,
  taskCount: number,
  workers: number,
  onResult?: (index: number, result: TaskResult) => void,
): Promise<TaskResult[]> {
  const { Worker } = await import('node:worker_threads')
  const typescript = import.meta.url.endsWith('.ts')
  const entry = new URL(`./grid-worker.${typescript ? 'ts' : 'js'}`, import.meta.url)
  const execArgv = typescript ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : []
  const results = new Array<TaskResult>(taskCount)
  let next = 0
  let finished = 0
  const pool = Array.from({ length: Math.max(1, Math.min(workers, taskCount)) }, () => new Worker(entry, { execArgv }))
  try {
    await new Promise<void>((resolve, reject) => {
      if (taskCount === 0) return resolve()
      const feed = (worker: InstanceType<typeof Worker>) => {
        if (next < taskCount) worker.postMessage({ type: 'task', index: next++ })
      }
      for (const worker of pool) {
        worker.on('message', (reply: WorkerReply) => {
          if (reply.type === 'error') return reject(new Error(`grid task ${reply.index} failed: ${reply.message}`))
          results[reply.index] = reply.result
          onResult?.(reply.index, reply.result)
          if (++finished === taskCount) return resolve()
          feed(worker)
        })
        worker.on('error', reject)
        worker.on('exit', (code) => {
          if (finished < taskCount) reject(new Error(`grid worker exited with code ${code}`))
        })
        worker.postMessage({ type: 'spec', spec })
        feed(worker)
      }
    })
  } finally {
    await Promise.all(pool.map((worker) => worker.terminate()))
  }
  return results
}
