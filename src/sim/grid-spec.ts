// A grid: scenarios × scales × servers × client models × strategies × feedback modes × seeds.
// Plain JSON so it can be posted to worker threads as it is.
import { CLIENT_MODELS, type ClientModel } from './client-model.js'
import { PAPER_SCENARIOS, scenarioByName, type Scenario } from './scenarios.js'
import type { Feedback, QuotaConfig, ServerKind } from './types.js'

export interface GridSpec {
  name: string
  scenarios: Scenario[]
  servers: ServerKind[]
  clientModels: ClientModel[]
  /** Registry names; `exponential` (UB, the reference of every percentage) is always run. */
  strategies: string[]
  feedbacks: Feedback[]
  /** Number of seeds; seeds are `firstSeed … firstSeed + seeds − 1`. */
  seeds: number
  firstSeed: number
  rttMs: number
  /** The quota at k = 1; each scale k runs it k times slower (see scale-run.ts). */
  quota: QuotaConfig
  /** Time scales k (default [1]): quota rate ÷ k, every workload and harness time × k. */
  scales?: number[]
}

/** The reference every row is compared with (the paper's UB). */
export const REFERENCE_STRATEGY = 'exponential'

/** The paper's quota: a bucket of 100, 80 per minute (stepped: 80 every 60 s). */
export const PAPER_QUOTA: QuotaConfig = { capacity: 100, perMinute: 80, stepIntervalMs: 60_000 }

export const PAPER_STRATEGIES = ['exponential', 'window', 'atb-paper', 'atb', 'aatb-paper', 'aatb', 'aws-adaptive', 'sre-throttling', 'ky']
export const GRID_FEEDBACKS: Feedback[] = ['status-only', 'retry-after', 'ratelimit']

/** Time scales of the `scale` grid: 800/min, the paper's 80/min, 8/min and 80/hour. */
export const SCALE_GRID_SCALES: readonly number[] = [0.1, 1, 10, 60]
/** The concurrent client model's scale grid stops at k = 10 (its runs cost more per request). */
export const SCALE_CONCURRENT_GRID_SCALES: readonly number[] = [0.1, 1, 10]
export const SCALE_STRATEGIES = ['exponential', 'atb', 'aatb', 'aws-adaptive']

export type GridName = 'paper' | 'headline' | 'quick' | 'scale' | 'scale-concurrent'
export const GRID_NAMES: readonly GridName[] = ['paper', 'headline', 'quick', 'scale', 'scale-concurrent']

/** The grids the CLI knows; `available` filters strategies to what the registry has. */
export function namedGrid(name: GridName, seeds: number, available: readonly string[]): GridSpec {
  const strategies = (names: string[]) => names.filter((n) => available.includes(n))
  const base = { seeds, firstSeed: 1, rttMs: 20, quota: PAPER_QUOTA, clientModels: ['paper'] as ClientModel[] }
  switch (name) {
    case 'paper':
      return normalizeSpec({
        ...base,
        name,
        scenarios: [...PAPER_SCENARIOS],
        servers: ['token-bucket-continuous', 'token-bucket-stepped'],
        strategies: strategies(PAPER_STRATEGIES),
        feedbacks: GRID_FEEDBACKS,
      })
    case 'headline':
      return normalizeSpec({
        ...base,
        name,
        scenarios: [...PAPER_SCENARIOS],
        servers: ['token-bucket-continuous', 'token-bucket-stepped', 'leaky-bucket', 'sliding-window-counter'],
        strategies: strategies(['exponential', 'atb', 'aatb', 'aws-adaptive']),
        feedbacks: GRID_FEEDBACKS,
      })
    case 'scale':
    case 'scale-concurrent':
      return normalizeSpec({
        ...base,
        name,
        scenarios: [...PAPER_SCENARIOS],
        servers: ['token-bucket-continuous', 'token-bucket-stepped'],
        strategies: strategies(SCALE_STRATEGIES),
        feedbacks: GRID_FEEDBACKS,
        clientModels: [name === 'scale' ? 'paper' : 'concurrent'],
        scales: [...(name === 'scale' ? SCALE_GRID_SCALES : SCALE_CONCURRENT_GRID_SCALES)],
      })
    case 'quick':
      return normalizeSpec({
        ...base,
        name,
        scenarios: ['real-trace-800', 'synthetic-5c-500', 'synthetic-100c-800'].map((n) => scenarioByName(n)!),
        servers: ['token-bucket-continuous', 'token-bucket-stepped'],
        strategies: strategies(PAPER_STRATEGIES),
        feedbacks: ['status-only', 'retry-after'],
      })
  }
}

/** Puts the reference first, drops duplicates. */
export function normalizeSpec(spec: GridSpec): GridSpec {
  const unique = <T>(values: T[]) => [...new Set(values)]
  return {
    ...spec,
    strategies: unique([REFERENCE_STRATEGY, ...spec.strategies]),
    feedbacks: unique(spec.feedbacks),
    servers: unique(spec.servers),
    clientModels: unique(spec.clientModels.length > 0 ? spec.clientModels : [...CLIENT_MODELS]),
    scales: unique(spec.scales && spec.scales.length > 0 ? spec.scales : [1]),
  }
}

/** The spec's scales, [1] when it names none. */
export function specScales(spec: GridSpec): number[] {
  return spec.scales && spec.scales.length > 0 ? spec.scales : [1]
}

/** One unit of work: every strategy × feedback on one (scenario, scale, server, client model, seed). */
export interface GridTask {
  scenario: number
  /** The time scale k itself (not an index). */
  scale: number
  server: number
  clientModel: number
  seed: number
}

export function gridTasks(spec: GridSpec): GridTask[] {
  const tasks: GridTask[] = []
  for (let scenario = 0; scenario < spec.scenarios.length; scenario++) {
    for (const scale of specScales(spec)) {
      for (let server = 0; server < spec.servers.length; server++) {
        for (let clientModel = 0; clientModel < spec.clientModels.length; clientModel++) {
          for (let s = 0; s < spec.seeds; s++) tasks.push({ scenario, scale, server, clientModel, seed: spec.firstSeed + s })
        }
      }
    }
  }
  return tasks
}
