// The simulator's strategy registry: name → a fresh strategy per run. The names are the
// ones result rows carry. Strategies are the SDK's own pacers and the peer models, so
// the grid measures the code that ships. AATB variants get a fresh in-process
// aggregator per run, configured with the quota's rate as the paper's operator
// configured `token_rate`.
import { aatb, atb, exponential, none, paperAatb, paperAtb, windowed } from '../core/pacers/index.js'
import { createAtbPacer } from '../core/pacers/atb-adaptive.js'
import { resolveAtbOptions, type ResolvedAtbOptions } from '../core/pacers/atb-options.js'
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

const KNOWN_SCALE = 'atb-known-scale'

const REGISTRY: SimStrategy[] = [
  plain('exponential', 'UB', () => exponential()),
  plain('window', 'WB', () => windowed()),
  plain('atb-paper', 'ATB (paper)', () => paperAtb()),
  plain('atb', 'ATB (polite-fetch)', () => atb()),
  // Evaluation only: the default ATB told the quota's true time scale instead of measuring it,
  // so the scale grid shows what the measurement costs (docs/algorithms.md).
  knownScale(),
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
  return REGISTRY.find((s) => s.name === name) ?? knownScaleVariant(name)
}


/**
 * `atb-known-scale`, or a variant of it with one input off by a factor: `atb-known-scale:scale*2`
 * (the time scale it is told, × 2) or `atb-known-scale:growthPerSecond*0.5` (one duration, rate or
 * count of the resolved options, × 0.5, on top of the true scale). Evaluation only: how sharply
 * the default's fit depends on its time scale and on each value (docs/algorithms.md, "How sharp
 * the k = 1 fit is").
 */
function knownScale(factorOf: { key: string; factor: number } | undefined = undefined, name = KNOWN_SCALE): SimStrategy {
  return {
    name,
    label: factorOf === undefined ? 'ATB, time scale given' : `ATB, time scale given, ${factorOf.key} × ${factorOf.factor}`,
    setup: ({ quota }) => {
      // The quota's rate, as a user who knows it gives it (a scale F × the true one: the rate ÷ F).
      const perSecond = quota.perMinute / 60
      const options: Record<string, unknown> = { ...resolveAtbOptions({ quotaPerSecond: perSecond }) }
      if (factorOf?.key === 'scale') options.quotaPerSecond = perSecond / factorOf.factor
      else if (factorOf !== undefined) options[factorOf.key] = (options[factorOf.key] as number) * factorOf.factor
      const resolved = options as unknown as ResolvedAtbOptions
      return { strategy: { name: 'atb', create: (init: PacerInit) => createAtbPacer(resolved, init) } }
    },
  }
}

/** `atb-known-scale:KEY*FACTOR` (see knownScale); undefined for any other name or an unknown key. */
function knownScaleVariant(name: string): SimStrategy | undefined {
  const match = /^atb-known-scale:(\w+)\*(\d+(?:\.\d+)?)$/.exec(name)
  if (match === null) return undefined
  const key = match[1]!
  const factor = Number(match[2])
  const numeric = typeof (resolveAtbOptions() as unknown as Record<string, unknown>)[key] === 'number'
  if (!(factor > 0) || (key !== 'scale' && !numeric)) return undefined
  return knownScale({ key, factor }, name)
}

/** Whether `name` is `atb-known-scale` or one of its variants (judged by the default's lines). */
export function isKnownScale(name: string): boolean {
  return name === KNOWN_SCALE || name.startsWith(`${KNOWN_SCALE}:`)
}

/** Every registered strategy name, in table order. */
export function strategyNames(): string[] {
  return REGISTRY.map((s) => s.name)
}

/** Table label for a strategy name (the name itself when unknown). */
export function strategyLabel(name: string): string {
  return lookupStrategy(name)?.label ?? name
}
