import { politeInterceptor } from '../src/node/index.js'
import type { Dispatcher } from 'undici'
const headers = { 'content-type': 'application/json', 'content-length': '11' }
const chunk = Buffer.from('{"ok":true}')
const ctrl = { aborted: false, paused: false, reason: null, abort() {}, pause() {}, resume() {} }
const base: Dispatcher.Dispatch = (opts, handler) => {
  queueMicrotask(() => {
    handler.onRequestStart?.(ctrl as never, {})
    handler.onResponseStart?.(ctrl as never, 200, headers as never, 'OK')
    handler.onResponseData?.(ctrl as never, chunk)
    handler.onResponseEnd?.(ctrl as never, {} as never)
  })
  return true
}
function once(dispatch: Dispatcher.Dispatch): Promise<void> {
  return new Promise((resolve, reject) => {
    dispatch({ origin: 'http://127.0.0.1:1', path: '/', method: 'GET' }, {
      onRequestStart() {}, onResponseStart() {}, onResponseData() {}, onResponseEnd() { resolve() }, onResponseError(_c, e) { reject(e) },
    })
  })
}
async function bench(name: string, dispatch: Dispatcher.Dispatch, n: number) {
  const start = performance.now(); const cpu0 = process.cpuUsage()
  await Promise.all(Array.from({ length: 64 }, async () => { for (let i = 0; i < n / 64; i++) await once(dispatch) }))
  { const c = process.cpuUsage(cpu0); console.log(name, ((c.user + c.system) / n).toFixed(2), "cpu µs/request") }
}
import { CallerSignal } from '../src/node/caller-signal.js'
const signal = process.env.LIGHT ? new CallerSignal().asAbortSignal() : new AbortController().signal
const trivial = { run: (job: any) => job.attempt(signal, 1).then((o: any) => o.value), stats: () => [], on: () => () => {}, close: async () => {} }
const mine = politeInterceptor({ limiter: trivial as any })(base)
for (let r = 0; r < 3; r++) { await bench('plain      ', base, 200_000); await bench('my code    ', mine, 200_000) }
