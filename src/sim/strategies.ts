// The simulator's strategy registry: name → a fresh strategy per run. The names are the
// ones result rows carry. Strategies are the SDK's own pacers and the peer models, so
// the grid measures the code that ships. AATB variants get a fresh in-process
// aggregator per run, configured with the quota's rate as the paper's operator
// configured `token_rate`.
import { aatb, atb, exponential, none, paperAatb, paperAtb, windowed } from '../core/pacers/index.js'
import { createAtbPacer } from '../core/pacers/atb-adaptive.js'
import { resolveAtbOptions } from '../core/pacers/atb-options.js'
import { PAPER_QUOTA } from './grid-spec.js'
import type { PacerInit, Strategy } from '../core/types.js'
import { createAggregator, PAPER_AGGREGATOR_OPTIONS } from '../telemetry/aggregator.js'
import { aggregatorWindows, windowForQuota } from '../telemetry/aggregator-windows.js'
import { awsAdaptive, kyBackoff, sreThrottling } from './peers/index.js'
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
  {
    // Evaluation only: the default ATB told the quota's true time scale instead of measuring it,
    // so the scale grid shows what the measurement costs (docs/algorithms.md).
    name: 'atb-known-scale',
    label: 'ATB, time scale given',
    setup: ({ quota }) => {
      const options = resolveAtbOptions()
      const scale = PAPER_QUOTA.perMinute / PAPER_QUOTA.capacity / (quota.perMinute / quota.capacity)
      const create = (init: PacerInit) => Object.assign(createAtbPacer(options, init), { fleetTimeScale: scale })
      return { strategy: { name: 'atb', create } }
    },
  },
  {
    name: 'aatb-paper',
    label: 'AATB (paper)',
    setup: ({ quota }) => ({
      strategy: paperAatb(),
      telemetry: { aggregator: createAggregator(PAPER_AGGREGATOR_OPTIONS), configuredQuotaPerSecond: quota.perMinute / 60 },
    }),
  },
  {
    name: 'aatb',
    label: 'AATB (polite-fetch)',
    // The operator configured the quota's rate and sized the endpoint's window for it
    // (docs/telemetry.md): at the paper's quota that is the default 30 s.
    setup: ({ quota }) => {
      const perSecond = quota.perMinute / 60
      return { strategy: aatb(), telemetry: { aggregator: createAggregator(aggregatorWindows(windowForQuota(perSecond))), configuredQuotaPerSecond: perSecond } }
    },
  },
  plain('aws-adaptive', 'AWS adaptive', () => awsAdaptive()),
  plain('sre-throttling', 'SRE throttling', () => sreThrottling()),
  plain('ky', 'ky', () => kyBackoff()),
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
