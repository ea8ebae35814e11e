// `polite-fetch simulate --live`: the same scenario twice — in virtual time through
// the simulator, and for real through `createClient` against the local HTTP quota
// server in compressed wall time — so the simulator's figures can be trusted to be
// the shipped client's figures. Both use the same arrivals (same seed); only time,
// the network and the event loop differ.
import { DEFAULT_ORIGIN_MS, runSimulation } from '../run-simulation.js'
import { REAL_SIGNAL_PATH } from '../signal-path.js'
import type { Scenario } from '../scenarios.js'
import { createServerModel } from '../servers/index.js'
import { lookupStrategy } from '../strategies.js'
import type { Feedback, QuotaConfig } from '../types.js'
import { generateWorkload } from '../workload.js'
import { runLiveWorkload } from './run-live-workload.js'

export interface LiveCheckOptions {
  scenario: Scenario
  strategies: string[]
  feedback: Feedback
  seeds: number[]
  quota: QuotaConfig
  timeScale: number
}

export interface LiveCheckRow {
  strategy: string
  feedback: Feedback
  seeds: number
  simThrottled: number
  liveThrottled: number
  simCompletionMs: number
  liveCompletionMs: number
  /** (live − sim) / sim × 100. */
  throttledDiffPct: number
  completionDiffPct: number
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length

export async function runLiveCheck(options: LiveCheckOptions): Promise<LiveCheckRow[]> {
  const rows: LiveCheckRow[] = []
  for (const name of options.strategies) {
    const entry = lookupStrategy(name)
    if (!entry) throw new Error(`unknown strategy '${name}'`)
    const sim = options.seeds.map((seed) => {
      const setup = entry.setup({ clients: options.scenario.clients, quota: options.quota, seed })
      if (setup.telemetry) throw new Error(`--live does not run telemetry strategies ('${name}') yet`)
      return runSimulation({
        workload: generateWorkload(options.scenario, seed),
        server: createServerModel('token-bucket-continuous', options.quota, DEFAULT_ORIGIN_MS),
        feedback: options.feedback,
        strategy: setup,
        clientModel: 'paper',
        signalPath: REAL_SIGNAL_PATH,
        seed,
      })
    })
    // Live seeds run at once, each against its own quota server.
    const live = await Promise.all(
      options.seeds.map((seed) =>
        runLiveWorkload({
          scenario: options.scenario,
          seed,
          strategyName: name,
          strategy: entry.setup({ clients: options.scenario.clients, quota: options.quota, seed }).strategy,
          feedback: options.feedback,
          timeScale: options.timeScale,
          quota: options.quota,
        }),
      ),
    )
    const simThrottled = mean(sim.map((r) => r.throttled))
    const liveThrottled = mean(live.map((r) => r.throttled))
    const simCompletionMs = mean(sim.map((r) => r.completionMs))
    const liveCompletionMs = mean(live.map((r) => r.completionMs))
    rows.push({
      strategy: name,
      feedback: options.feedback,
      seeds: options.seeds.length,
      simThrottled,
      liveThrottled,
      simCompletionMs,
      liveCompletionMs,
      throttledDiffPct: simThrottled === 0 ? (liveThrottled === 0 ? 0 : Infinity) : ((liveThrottled - simThrottled) / simThrottled) * 100,
      completionDiffPct: ((liveCompletionMs - simCompletionMs) / simCompletionMs) * 100,
    })
  }
  return rows
}
