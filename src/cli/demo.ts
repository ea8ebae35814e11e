// `polite-fetch demo` (npm start): one shared quota, about 20 independent clients,
// once with the paper's exponential backoff and once with polite-fetch's default
// ATB, side by side. Both runs hit their own local quota server at the same time, in
// compressed time, so the demo takes well under a minute.
import { parseArgs } from 'node:util'
import { atb, exponential } from '../core/pacers/index.js'
import { resultRow } from '../sim/result-row.js'
import { runLiveWorkload, type LiveRow } from '../sim/live/run-live-workload.js'
import { syntheticScenario } from '../sim/scenarios.js'
import { textTable } from '../sim/live/text-table.js'
import { demoProgress } from './demo-progress.js'
import type { Feedback } from '../sim/types.js'
import { FEEDBACK_MODES } from '../sim/types.js'

const help = `usage: polite-fetch demo [--json] [--clients 20] [--requests 800] [--feedback status-only]
                          [--seed 1] [--time-scale 20]

Runs a shared-quota workload (token bucket of 100, 80 per minute, continuous refill; Poisson
arrivals over 5 minutes, 1.6x what the quota admits) against a local quota server on 127.0.0.1,
once with exponential backoff and once with polite-fetch, and prints attempts, 429s and completion.
`

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean', default: false },
      clients: { type: 'string', default: '20' },
      requests: { type: 'string', default: '800' },
      feedback: { type: 'string', default: 'status-only' },
      seed: { type: 'string', default: '1' },
      'time-scale': { type: 'string', default: '20' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    process.stdout.write(help)
    return 0
  }
  const clients = Number(values.clients)
  const requests = Number(values.requests)
  const seed = Number(values.seed)
  const timeScale = Number(values['time-scale'])
  const feedback = values.feedback as Feedback
  if (!FEEDBACK_MODES.includes(feedback)) {
    process.stderr.write(`polite-fetch demo: --feedback must be one of ${FEEDBACK_MODES.join(', ')}\n`)
    return 1
  }
  for (const [name, value] of Object.entries({ clients, requests, seed, 'time-scale': timeScale })) {
    if (!(Number.isFinite(value) && value > 0)) {
      process.stderr.write(`polite-fetch demo: --${name} must be a positive number\n`)
      return 1
    }
  }
  const scenario = syntheticScenario(clients, requests)
  if (!values.json) {
    process.stderr.write(
      `${clients} clients, ${requests} requests over 5 min on one quota (100 tokens, 80/min), ` +
        `${feedback} feedback, time x${timeScale}: running both strategies…\n`,
    )
  }
  const common = { scenario, seed, feedback, timeScale }
  const names = ['exponential', 'polite-fetch'] as const
  // Progress goes to stderr (never into --json's stdout), per strategy as `simulate` shows its grid.
  const progress = values.json ? undefined : demoProgress(process.stderr, names)
  const progressOf = (index: number) => (progress === undefined ? {} : { onProgress: progress.of(index) })
  const rows: LiveRow[] = await Promise.all([
    runLiveWorkload({ ...common, strategyName: names[0], strategy: exponential(), ...progressOf(0) }),
    runLiveWorkload({ ...common, strategyName: names[1], strategy: atb(), ...progressOf(1) }),
  ])
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ rows: rows.map(resultRow) }, null, 2)}\n`)
    return 0
  }
  process.stdout.write(`${renderDemo(rows)}\n`)
  return 0
}

export function renderDemo(rows: LiveRow[]): string {
  const [baseline, polite] = rows as [LiveRow, LiveRow]
  const table = textTable(
    ['strategy', 'feedback', 'clients', 'requests', 'attempts', '429s', 'completion (model s)'],
    rows.map((r) => [r.strategy, r.feedback, r.clients, r.requests, r.attempts, r.throttled, Math.round(r.completionMs / 1000)]),
  )
  const fewer = baseline.throttled === 0 ? 0 : (1 - polite.throttled / baseline.throttled) * 100
  const longer = (polite.completionMs / baseline.completionMs - 1) * 100
  return `${table}\n\npolite-fetch: ${fewer.toFixed(1)}% fewer 429s than exponential backoff, ` +
    `completion ${longer >= 0 ? '+' : ''}${longer.toFixed(1)}%.`
}
