// The pure pacers: one Strategy per file, re-exported here.
export { none } from './none.js'
export { exponential, EXPONENTIAL_DEFAULTS, type ExponentialOptions } from './exponential.js'
export { windowed, WINDOW_DEFAULTS, type WindowOptions } from './window.js'
export { atb, paperAtb, ATB_DEFAULTS, PAPER_ATB_DEFAULTS, type AtbOptions, type PaperAtbOptions } from './atb.js'
export {
  aatb,
  paperAatb,
  AATB_DEFAULTS,
  PAPER_AATB_DEFAULTS,
  type AatbOptions,
  type PaperAatbOptions,
} from './aatb.js'
