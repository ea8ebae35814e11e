// The simulator's strategy registry: name → a fresh strategy per run. The names are the
// ones result rows carry. Strategies are the SDK's own pacers and the peer models, so
// the grid measures the code that ships.
import { atb, paperAtb } from '../core/pacers/atb.js'
import { exponential } from '../core/pacers/exponential.js'
import { none } from '../core/pacers/none.js'
import { windowed } from '../core/pacers/window.js'
import type { Strategy } from '../core/types.js'
import type { SimStrategy } from './run-strategy.js'

const plain = (name: string, label: string, make: () => Strategy): SimStrategy => ({
  name,
  label,
  setup: () => ({ strategy: make() }),
})

const REGISTRY: SimStrategy[] = [
  plain('exponential', 'UB', () => exponential()),
  plain('window', 'WB', () => windowed()),
  plain('atb-paper', 'ATB (paper)', () => paperAtb()),
  plain('atb', 'ATB (polite-fetch)', () => atb()),
  plain('none', 'no pacing', () => none()),
]

export function lookupStrategy(name: string): SimStrategy | undefined {
  return REGISTRY.find((s) => s.name === name)
}

/** Every registered strategy name, in table order. */
export function strategyNames(): string[] {
  return REGISTRY.map((s) => s.name)
}

/** Table label for a strategy name (the name itself when unknown). */
export function strategyLabel(name: string): string {
  return lookupStrategy(name)?.label ?? name
}
