import { politeInterceptor } from '../src/node/index.js'
import type { Dispatcher } from 'undici'
const headers = { 'content-type': 'application/json', 'content-length': '11' }
const chunk = Buffer.from('{"ok":true}')
const ctrl = { aborted: false, paused: false, reason: null, abort() {}, pause() {}, resume() {} }
// a fake transport: answers asynchronously (next microtask) like a socket would (macrotask really)
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
  const workers = Array.from({ length: 64 }, async () => { for (let i = 0; i < n / 64; i++) await once(dispatch) })
  await Promise.all(workers)
  const c = process.cpuUsage(cpu0)
  console.log(name, ((c.user + c.system) / n).toFixed(2), 'cpu µs/request', (((performance.now() - start) * 1000) / n).toFixed(2), 'wall', (process.memoryUsage().heapUsed/1e6).toFixed(0), 'MB')
}
const interceptor = politeInterceptor()
const polite = interceptor(base)
for (let r = 0; r < 3; r++) {
  await bench('plain ', base, 200_000)
  await bench('polite', polite, 200_000)
}
await interceptor.limiter.close()
