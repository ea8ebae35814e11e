// The demo's progress: both strategies run at once, so one line shows each of them
// (a single progress bar per strategy would overwrite the other's on the same line).
// On a terminal the line is redrawn in place; elsewhere (CI logs, pipes) each strategy
// gets a line at every quarter, so a log still shows that the run is moving.
import type { ProgressTarget } from '../sim/report/progress-bar.js'

export interface DemoProgress {
  /** The `onProgress` callback of strategy `index`. */
  of(index: number): (done: number, total: number) => void
}

const QUARTERS = 4

export function demoProgress(target: ProgressTarget, labels: readonly string[], clock: () => number = () => performance.now()): DemoProgress {
  const started = clock()
  const done = labels.map(() => 0)
  const totals = labels.map(() => 0)
  const quarters = labels.map(() => 0)
  let lastDrawn = ''
  const seconds = (): string => `${((clock() - started) / 1000).toFixed(0)}s`

  const draw = (): void => {
    const parts = labels.map((label, i) => {
      const total = totals[i] as number
      const percent = total > 0 ? ((done[i] as number) / total) * 100 : 0
      return `${label} ${percent.toFixed(0).padStart(3)}% ${done[i]}/${total || '?'}`
    })
    const line = `${parts.join(' · ')} · ${seconds()}`
    if (line === lastDrawn) return
    lastDrawn = line
    target.write(`\r${line}`)
    if (done.every((n, i) => n >= (totals[i] as number) && (totals[i] as number) > 0)) target.write('\n')
  }

  return {
    of(index) {
      return (count, total) => {
        done[index] = count
        totals[index] = total
        if (target.isTTY) {
          draw()
          return
        }
        const quarter = total > 0 ? Math.floor((count / total) * QUARTERS) : QUARTERS
        if (quarter <= (quarters[index] as number)) return
        quarters[index] = quarter
        target.write(`${labels[index]}: ${(quarter * 100) / QUARTERS}% (${count}/${total} requests) after ${seconds()}\n`)
      }
    },
  }
}
