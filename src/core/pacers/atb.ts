// The ATB strategies: `atb()` is polite-fetch's default (adaptive, free until something
// is wrong, guided by the server when it speaks); `paperAtb()` is the paper's algorithm
// with its evaluation constants, kept exact for the benchmarks.
import type { Pacer, PacerInit, Strategy } from '../types.js'
import { createAtbPacer, ATB_KIND } from './atb-adaptive.js'
import { resolveAtbOptions, type AtbOptions } from './atb-options.js'
import { createPaperAtbPacer, PAPER_ATB_DEFAULTS, PAPER_ATB_KIND, type PaperAtbOptions } from './atb-paper.js'

export type { AtbOptions } from './atb-options.js'
export { ATB_DEFAULTS } from './atb-options.js'
export type { PaperAtbOptions } from './atb-paper.js'
export { PAPER_ATB_DEFAULTS } from './atb-paper.js'

/** polite-fetch's default strategy. Strategy name `atb`. */
export function atb(options: AtbOptions = {}): Strategy {
  const resolved = resolveAtbOptions(options)
  return {
    name: ATB_KIND,
    create: (init: PacerInit): Pacer => createAtbPacer(resolved, init),
  }
}

/** The paper's ATB (ATB.py with configs/ATB/config_1.json). Strategy name `atb-paper`. */
export function paperAtb(options: PaperAtbOptions = {}): Strategy {
  const resolved = { ...PAPER_ATB_DEFAULTS }
  for (const key of Object.keys(PAPER_ATB_DEFAULTS) as (keyof PaperAtbOptions)[]) {
    const value = options[key]
    if (typeof value === 'number' && !Number.isNaN(value)) resolved[key] = value
  }
  return {
    name: PAPER_ATB_KIND,
    create: (init: PacerInit): Pacer => createPaperAtbPacer(resolved, init),
  }
}
