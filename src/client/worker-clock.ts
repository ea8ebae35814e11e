// A page's clock: while the page is hidden its timers also run in a dedicated worker. Browsers
// throttle the timers of a hidden tab (Chromium: at most one wake-up a second, and once a minute
// after five minutes hidden), not a dedicated worker's. A lane paces its sends with its timers
// and sends one unit per wake-up, so a hidden page's lanes ran at about one call a second: 60
// calls took 40 s instead of 7 s, in a hidden tab and in the visible tabs a hidden leader paces
// (`npm run bench:hidden-leader`). A timer set while hidden is armed twice, in the worker and on
// the page, and fires once, on whichever comes first, so a worker that cannot start (a
// Content-Security-Policy without `worker-src blob:`) or that stops costs only the speed, never
// a call. A page that is never hidden starts no worker.
import { MAX_TIMEOUT_MS, sleepOn, systemClock, type SystemClock } from './system-clock.js'

/** The worker: `[id, ms]` arms a timer that answers `id`; `[id, -1]` clears it. */
const WORKER_SOURCE =
  'const t=new Map();onmessage=({data:[id,ms]})=>{if(ms<0){clearTimeout(t.get(id));t.delete(id)}' +
  'else t.set(id,setTimeout(()=>{t.delete(id);postMessage(id)},ms))}'

/** What the clock needs of a dedicated worker (the page's `Worker`). */
export interface TimerWorker {
  postMessage(message: [number, number]): void
  onmessage: ((event: { data: unknown }) => void) | null
  onerror: ((event: unknown) => void) | null
  terminate(): void
}

interface Armed {
  /** Runs the callback once; `inWorker`: the worker's copy came due (it is gone already). */
  fire(inWorker: boolean): void
  backup: unknown
}

/** A page's `Worker` on the timer source, or undefined where none can start. */
export function startTimerWorker(): TimerWorker | undefined {
  if (!canStartTimerWorker()) return undefined
  const scope = globalThis as unknown as { Worker: new (url: string) => TimerWorker }
  try {
    return new scope.Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' })))
  } catch {
    return undefined // refused synchronously (a CSP, a sandboxed frame): the page's timers alone
  }
}

/** Whether the page is hidden (a background tab, a minimised window). */
export function pageHidden(): boolean {
  return (globalThis as { document?: { visibilityState?: string } }).document?.visibilityState === 'hidden'
}

/** Whether this is a page that can run a timer worker (not Node, not a worker itself). */
export function canStartTimerWorker(): boolean {
  const scope = globalThis as { Worker?: unknown; Blob?: unknown; URL?: { createObjectURL?: unknown }; document?: unknown }
  return scope.document !== undefined && typeof scope.Worker === 'function' && typeof scope.Blob === 'function' && typeof scope.URL?.createObjectURL === 'function'
}

/**
 * A clock on `fallback`'s timers that, while `hidden()`, also times in `startWorker()`'s worker;
 * the worker starts at the first timer set while hidden.
 */
export function workerClock(
  startWorker: () => TimerWorker | undefined = startTimerWorker,
  fallback: SystemClock = systemClock,
  hidden: () => boolean = pageHidden,
): SystemClock {
  const armed = new Map<number, Armed>()
  let worker: TimerWorker | undefined | null = null // null: not started yet
  let seq = 0

  const timerWorker = (): TimerWorker | undefined => {
    if (worker !== null) return worker
    worker = startWorker()
    if (worker !== undefined) {
      worker.onmessage = (event) => armed.get(event.data as number)?.fire(true)
      // Refused after starting (a CSP checks the script's URL when it loads): the backups fire.
      worker.onerror = () => {
        worker?.terminate()
        worker = undefined
      }
    }
    return worker
  }

  function setTimer<A>(ms: number, fn: (arg: A) => void, arg: A, weak?: boolean): unknown {
    // Visible (or beyond setTimeout's range, where the page's clock chains the steps and the
    // worker's would fire at once): the page's timer alone, with no bookkeeping.
    if (!(ms <= MAX_TIMEOUT_MS && hidden())) return fallback.setTimer(ms, fn, arg, weak)
    // Negative ids: never a page timer's handle (positive integers, or a chained timer's object).
    const id = -++seq
    const entry: Armed = {
      fire(inWorker) {
        if (!armed.delete(id)) return
        if (inWorker) fallback.clearTimer(entry.backup)
        else worker?.postMessage([id, -1])
        fn(arg)
      },
      backup: undefined,
    }
    armed.set(id, entry)
    entry.backup = fallback.setTimer(ms, () => entry.fire(false), undefined, weak)
    timerWorker()?.postMessage([id, Math.max(0, ms)])
    return id
  }

  function clearTimer(handle: unknown): void {
    const entry = armed.get(handle as number)
    if (entry === undefined) {
      fallback.clearTimer(handle)
      return
    }
    armed.delete(handle as number)
    fallback.clearTimer(entry.backup)
    worker?.postMessage([handle as number, -1])
  }

  return { now: () => fallback.now(), sleep: sleepOn(setTimer, clearTimer), setTimer, clearTimer }
}
