// Runs grid tasks on worker threads, handing out the next task as each one finishes,
// and returns the results in task order (so the output never depends on which worker
// was faster). In a source checkout the worker is TypeScript. Node 20 does not apply
// loader hooks passed as a worker's `--import`, so a TypeScript worker starts as a tiny
// script that loads the entry through tsx's own API (resolved from this package): it
// works under tsx, Vitest and the bin alike. Built (.js) workers start directly.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
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
  // tsx's API appends a namespace query to module URLs: look at the path only.
  const typescript = new URL(import.meta.url).pathname.endsWith('.ts')
  const entry = new URL(`./grid-worker.${typescript ? 'ts' : 'js'}`, import.meta.url)
  const start = (): InstanceType<typeof Worker> => {
    if (!typescript) return new Worker(entry)
    const code = `import(${JSON.stringify(tsxEsmApiUrl())}).then((api) => api.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(import.meta.url)}))`
    return new Worker(code, { eval: true })
  }
  const results = new Array<TaskResult>(taskCount)
  let next = 0
  let finished = 0
  const pool = Array.from({ length: Math.max(1, Math.min(workers, taskCount)) }, start)
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

/** tsx's ESM API (`tsx/esm/api`, import condition), as a file URL. */
function tsxEsmApiUrl(): string {
  const require = createRequire(import.meta.url)
  const manifestPath = require.resolve('tsx/package.json')
  const manifest = require('tsx/package.json') as { exports: Record<string, { import: { default: string } }> }
  return pathToFileURL(join(dirname(manifestPath), manifest.exports['./esm/api']!.import.default)).href
}
