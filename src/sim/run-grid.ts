// Runs a grid and turns it into rows. Worker threads by default (two: the target
// machine has two cores); in-process when asked for one worker or when the caller
// brings its own strategies (functions cannot cross threads).
import { gridTasks, type GridSpec } from './grid-spec.js'
import type { SignalPath } from './run-simulation.js'
import { runTask, type StrategyLookup, type TaskResult } from './run-task.js'
import { aggregateRows, type SimRow } from './sim-row.js'

export interface GridOptions {
  /** Worker threads; default min(2, cores). 0 or 1 runs in-process. */
  workers?: number
  /** Called after every task (scenario × server × client model × seed). */
  onProgress?(done: number, total: number): void
  /** In-process only: strategies other than the registry's. */
  lookup?: StrategyLookup
  /** In-process only: another header/parse path (default: the real one). */
  signalPath?: SignalPath
}

export interface GridResult {
  spec: GridSpec
  rows: SimRow[]
  /** Worker threads used (1 = in-process). */
  workers: number
}

export async function runGrid(spec: GridSpec, options: GridOptions = {}): Promise<GridResult> {
  const tasks = gridTasks(spec)
  const workers = options.workers ?? Math.min(2, await cores())
  let done = 0
  const progress = () => options.onProgress?.(++done, tasks.length)
  let results: TaskResult[]
  const threaded = workers > 1 && !options.lookup && !options.signalPath
  if (threaded) {
    const { runInWorkers } = await import('./worker-pool.js')
    results = await runInWorkers(spec, tasks.length, workers, progress)
  } else {
    const lookup = options.lookup ?? (await import('./strategies.js')).lookupStrategy
    const signalPath = options.signalPath ?? (await import('./signal-path.js')).REAL_SIGNAL_PATH
    results = tasks.map((task) => {
      const result = runTask(spec, task, lookup, signalPath)
      progress()
      return result
    })
  }
  return { spec, rows: aggregateRows(spec, tasks, results), workers: threaded ? workers : 1 }
}

/** Cores available, or 1 where there is no node:os (the in-process path needs none). */
async function cores(): Promise<number> {
  try {
    const os = await import('node:os')
    return os.availableParallelism()
  } catch {
    return 1
  }
}
