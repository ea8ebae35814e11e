// `politeInterceptor(options)`: an undici interceptor (for `Dispatcher.compose`) that
// sends every dispatch through the same lanes and pacers as `createClient`. A dispatch
// waits in its lane, is sent, its response head becomes a Signal; a retryable 429/503
// is drained and the dispatch goes back to the head of its lane (never before
// Retry-After); anything else is handed to the caller's handler untouched.
// `politeAgent` runs the very same path without `compose` (see polite-agent.ts).
import type { Dispatcher } from 'undici'
import type { Limiter } from '../client/create-limiter.js'
import { checkPoliteOptionNames, createPacing, type PoliteOptions } from './pacing.js'

export type PoliteInterceptorOptions = PoliteOptions

/** The interceptor, with the limiter it paces through (stats, events). */
export interface PoliteInterceptor extends Dispatcher.DispatcherComposeInterceptor {
  readonly limiter: Limiter
  /** Stop telemetry and close the limiter (waiting requests reject with ClosedError; pacer state is saved). */
  close(): Promise<void>
}

export function politeInterceptor(options: PoliteInterceptorOptions = {}): PoliteInterceptor {
  checkPoliteOptionNames('politeInterceptor', options)
  const pacing = createPacing(options)
  const interceptor = (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch => pacing.pace(dispatch)
  return Object.assign(interceptor, { limiter: pacing.limiter, close: () => pacing.close() })
}
