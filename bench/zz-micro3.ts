// estimate: what if the limiter's per-attempt AbortController were cheap?
import { CallerSignal } from '../src/node/caller-signal.js'
class LightController { signal = new CallerSignal(); abort(r?: unknown) { this.signal.abort(r) } }
;(globalThis as any).AbortController = LightController
await import('./zz-micro.js')
