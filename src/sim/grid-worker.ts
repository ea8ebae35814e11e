// Worker-thread entry of the grid: receives the spec once, then task indices, and
// answers each with its TaskResult. Strategies come from the registry (functions
// cannot cross threads; names can).
import { parentPort } from 'node:worker_threads'
import { gridTasks, type GridSpec, type GridTask } from './grid-spec.js'
import { runTask } from './run-task.js'
import { REAL_SIGNAL_PATH } from './signal-path.js'
import { lookupStrategy } from './strategies.js'

export type WorkerRequest = { type: 'spec'; spec: GridSpec } | { type: 'task'; index: number }

const port = parentPort
if (port) {
  let spec: GridSpec | undefined
  let tasks: GridTask[] = []
  port.on('message', (message: WorkerRequest) => {
    if (message.type === 'spec') {
      spec = message.spec
      tasks = gridTasks(spec)
      return
    }
    try {
      const result = runTask(spec!, tasks[message.index]!, lookupStrategy, REAL_SIGNAL_PATH)
      port.postMessage({ type: 'result', index: message.index, result })
    } catch (error) {
      port.postMessage({ type: 'error', index: message.index, message: error instanceof Error ? (error.stack ?? error.message) : String(error) })
    }
  })
}
