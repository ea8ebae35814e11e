// The real path from a server model's decision to a pacer's Signal: the headers a server
// of that feedback mode would send, read back by the SDK's own parser.
import { readSignals } from '../core/signals/index.js'
import { feedbackHeaders } from './feedback-headers.js'
import type { SignalPath } from './run-simulation.js'

export const REAL_SIGNAL_PATH: SignalPath = { feedbackHeaders, readSignals }
