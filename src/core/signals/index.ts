// Public surface of the server-signal reader.
export { readSignals, SIGNAL_HEADER_NAMES, type HeaderSource } from './read-signals.js'
export { statusSignal } from './status-signal.js'
export { parseHttpDate } from './http-date.js'
export { parseRfc3339 } from './rfc3339.js'
export { parseDurationMs } from './duration.js'
export {
  parseSfList,
  parseSfDictionary,
  type SfBareItem,
  type SfParams,
  type SfItem,
  type SfInnerList,
  type SfMember,
} from './structured-field.js'
export { MAX_HORIZON_MS, EPOCH_SECONDS_THRESHOLD, EPOCH_MS_THRESHOLD } from './reset-time.js'
