// Test-only: the default ATB with some of its internal constants replaced (atb-constants.ts),
// so that a test can compare a rule switched on and off. Not an option: `atb()` rejects these
// names; the hook is `createAtbPacer`, which takes every value the pacer decides with.
import { createAtbPacer } from '../../../src/core/pacers/atb-adaptive.js'
import { ATB_CONSTANTS } from '../../../src/core/pacers/atb-constants.js'
import { resolveAtbOptions, type AtbOptions, type ResolvedAtbOptions } from '../../../src/core/pacers/atb-options.js'
import type { Strategy } from '../../../src/core/types.js'

export function tunedAtb(tuning: Partial<ResolvedAtbOptions> = {}): Strategy {
  const options: Record<string, unknown> = {}
  const constants: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(tuning)) (key in ATB_CONSTANTS ? constants : options)[key] = value
  const resolved = { ...resolveAtbOptions(options as AtbOptions), ...constants } as ResolvedAtbOptions
  return { name: 'atb', create: (init) => createAtbPacer(resolved, init) }
}
