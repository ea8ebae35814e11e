// `polite-fetch simulate`: the deterministic shared-quota simulator from the command line.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { CLIENT_MODELS, isClientModel, type ClientModel } from '../sim/client-model.js'
import { GRID_NAMES, PAPER_QUOTA, namedGrid, normalizeSpec, specScales, type GridName, type GridSpec } from '../sim/grid-spec.js'
import { stringifyGrid, type GridJson } from '../sim/grid-json.js'
import { progressBar } from '../sim/report/progress-bar.js'
import type { HeadlineBaseline } from '../sim/report/headline-comparison.js'
import { renderMarkdown } from '../sim/report/markdown-report.js'
import { withOptionsTable } from '../sim/report/options-table.js'
import { scaleCharts } from '../sim/report/scale-report.js'
import { scaleVerdictText } from '../sim/report/scale-verdict.js'
import { renderRoutesSection, routesTableLines, ROUTES_TABLE_HEADER, type RoutesJson } from '../sim/routes/routes-report.js'
import { ROUTES_SCENARIO } from '../sim/routes/routes-scenario.js'
import { runRoutesGrid } from '../sim/routes/run-routes-grid.js'
import { scatterSvg, timelineSvg } from '../sim/report/svg-charts.js'
import { runGrid } from '../sim/run-grid.js'
import { runSimulation } from '../sim/run-simulation.js'
import { PAPER_SCENARIOS, scenarioByName, type Scenario } from '../sim/scenarios.js'
import { SERVER_KINDS, createServerModel, isServerKind } from '../sim/servers/index.js'
import type { SimRow } from '../sim/sim-row.js'
import { REAL_SIGNAL_PATH } from '../sim/signal-path.js'
import { lookupStrategy, strategyLabel, strategyNames } from '../sim/strategies.js'
import { FEEDBACK_MODES, type Feedback, type ServerKind } from '../sim/types.js'
import { generateWorkload } from '../sim/workload.js'
import { DEFAULT_SIM_DRAWS, runLiveCheck } from '../sim/live/live-check.js'
import { textTable } from '../sim/live/text-table.js'

const usage = `usage: polite-fetch simulate [options]

Deterministic shared-quota simulator (virtual time; the SDK's own pacers).

  --grid NAME                  paper|headline|quick|scale|scale-concurrent (default quick)
                                 paper:    15 paper scenarios × all strategies × status-only/retry-after/ratelimit
                                           × token bucket continuous and stepped
                                 headline: polite-fetch's atb and aatb vs UB and aws-adaptive on 4 server models
                                 quick:    3 scenarios, 2 feedback modes (a few seconds)
                                 scale:    the 15 paper scenarios at k = 0.1, 1, 10, 60 × exponential, atb,
                                           aatb, aws-adaptive × 3 feedback modes × continuous and stepped
                                 scale-concurrent: the same with concurrent clients, k = 0.1, 1, 10
  --seeds N                    seeds per cell (default 30 for paper/headline, 5 for quick)
  --first-seed N               first seed (default 1)
  --scenario LIST              comma list of scenario names, or all (e.g. real-trace-800,synthetic-5c-500)
  --strategy LIST              comma list (${strategyNames().join(', ')}); UB (exponential) always runs;
                               evaluation: atb-known-scale:scale*F (told F × the true scale) or
                               atb-known-scale:KEY*F (one of atb's resolved values × F, e.g. growthPerSecond*0.5)
  --server LIST                comma list (${SERVER_KINDS.join(', ')})
  --feedback LIST              comma list (${FEEDBACK_MODES.join(', ')}), or all
  --client-model LIST          paper, concurrent, or all (default paper)
  --scale LIST                 comma list of time scales k (default 1): the quota refills k× slower and
                               arrivals, their window, the start stagger, the stepped interval and the
                               run's virtual-time limit are k× longer (k = 60: the paper's 80/min as 80/h)
  --rtt MS                     round trip per attempt (default 20)
  --workers N                  worker threads (default 2; 1 = in-process)
  --json FILE                  write rows as JSON (byte-identical for the same grid and seeds)
  --markdown FILE              write the report (docs/results.md)
  --svg DIR                    write SVG charts
  --include FILE               add the rows of an earlier --json file to the markdown report
                               (e.g. the headline grid's leaky-bucket and sliding-window rows)
  --scale-rows FILE            the markdown report's scale section (and --svg its charts) from an
                               earlier --json file of the scale grids (repeatable)
  --compare FILE               after the grid, its scale verdict beside an earlier --json file of the
                               same grid (cells passing, scale-free breaks, every cell that changed);
                               a grid over several --scale values prints the verdict alone
  --live                       run one scenario (default real-trace-800) in the simulator AND for real:
                               the shipped createClient against the local HTTP quota server, time
                               compressed (--time-scale, default 20), and print both side by side
                               (--strategy default exponential,atb; --seeds default 3; --server one
                               model, default token-bucket-continuous)
  --time-scale N               with --live: model time runs N× faster than wall time
  --routes                     the routes scenario (12 clients, POST /orders 1/s under a global 10/s):
                               the shipped createClient in virtual time at each --scale (default
                               0.1,1,10,60), --seeds (default 10), --feedback (default status-only),
                               --strategy (default atb; UB always runs), with a splitting-off control
  --routes-rows FILE           the markdown report's routes section from an earlier --routes --json file
  --headline-baseline FILE     the markdown report shows the k = 1 headline rows beside this file's
                               ({ source, rows }: bench/results/headline-baseline.json)
  --help                       this text
`

const list = (value: string | undefined) => (value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean))

class UsageError extends Error {}

export async function run(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parse>
  try {
    args = parse(argv)
  } catch (error) {
    process.stderr.write(`polite-fetch simulate: ${(error as Error).message}\n\n${usage}`)
    return 1
  }
  const { values } = args
  if (values.help) {
    process.stdout.write(usage)
    return 0
  }
  if (values.live) return runLive(values)
  if (values.routes) return runRoutesMode(values)
  let spec: GridSpec
  try {
    spec = buildSpec(values)
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`polite-fetch simulate: ${error.message}\n`)
      return 1
    }
    throw error
  }
  const workers = values.workers === undefined ? undefined : positiveInt(values.workers, '--workers')
  const runs = spec.scenarios.length * specScales(spec).length * spec.servers.length * spec.clientModels.length * spec.strategies.length * spec.feedbacks.length * spec.seeds
  const started = performance.now()
  const result = await runGrid(spec, {
    ...(workers === undefined ? {} : { workers }),
    onProgress: progressBar(process.stderr, `simulate ${spec.name}`),
  })
  const seconds = (performance.now() - started) / 1000
  const timing = `Grid time: ${runs} runs in ${seconds.toFixed(1)} s (${result.workers === 1 ? 'in-process' : `${result.workers} worker threads`}).`
  process.stderr.write(`${timing}\n`)

  const written: string[] = []
  if (values.json) {
    await writeText(values.json, stringifyGrid(result.spec, result.rows))
    written.push(values.json)
  }
  let charts: Array<{ path: string; caption: string }> = []
  const base = values.markdown ? dirname(resolve(values.markdown)) : process.cwd()
  const scaleFiles = values['scale-rows'] ?? []
  const scale = scaleFiles.length > 0 ? await scaleRowsOf(scaleFiles) : { rows: result.rows, commands: [] }
  let scaleChartPaths: string[] | undefined
  if (values.svg) {
    const files = await writeCharts(values.svg, spec, result.rows)
    written.push(...files.map((f) => f.file))
    charts = files.map((f) => ({ path: relative(base, resolve(f.file)), caption: f.caption }))
    const scaleFilesWritten = await writeScaleCharts(values.svg, scale.rows)
    written.push(...scaleFilesWritten)
    scaleChartPaths = scaleFilesWritten.map((file) => relative(base, resolve(file)))
  }
  if (values.markdown) {
    const command = `npx polite-fetch simulate ${argv.join(' ')}`
    const rows = await withIncluded(result.rows, values.include ?? [])
    const scaleSection = { ...scale, ...(scaleChartPaths ? { chartPaths: scaleChartPaths } : {}) }
    const routes = values['routes-rows'] === undefined ? undefined : await routesSectionOf(values['routes-rows'])
    const baselineFile = values['headline-baseline']
    const headlineBaseline = baselineFile === undefined ? undefined : await headlineBaselineOf(baselineFile)
    await writeText(values.markdown, renderMarkdown(result.spec, rows, { command, timing, charts, scale: scaleSection, ...(routes ? { routes } : {}), ...(headlineBaseline ? { headlineBaseline } : {}) }))
    written.push(values.markdown)
    // The options table of docs/algorithms.md, beside the report (options-table.ts).
    const algorithms = join(base, 'algorithms.md')
    const doc = await readFile(algorithms, 'utf8').catch(() => undefined)
    if (doc !== undefined && withOptionsTable(doc) !== doc) {
      await writeText(algorithms, withOptionsTable(doc))
      written.push(relative(process.cwd(), algorithms))
    }
  }
  // The scale lines' verdict: the figures a pacer change is judged by (scale-verdict.ts).
  if (values.compare !== undefined || specScales(spec).length > 1) {
    const before = values.compare === undefined ? undefined : (await scaleRowsOf([values.compare])).rows
    process.stderr.write(scaleVerdictText(result.rows, before))
  }
  if (written.length === 0) process.stdout.write(summaryTable(result.rows))
  else process.stderr.write(`wrote ${written.join(', ')}\n`)
  return 0
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      grid: { type: 'string' },
      seeds: { type: 'string' },
      'first-seed': { type: 'string' },
      scenario: { type: 'string' },
      strategy: { type: 'string' },
      server: { type: 'string' },
      feedback: { type: 'string' },
      'client-model': { type: 'string' },
      rtt: { type: 'string' },
      scale: { type: 'string' },
      workers: { type: 'string' },
      json: { type: 'string' },
      markdown: { type: 'string' },
      svg: { type: 'string' },
      include: { type: 'string', multiple: true },
      'scale-rows': { type: 'string', multiple: true },
      compare: { type: 'string' },
      live: { type: 'boolean' },
      'time-scale': { type: 'string' },
      routes: { type: 'boolean' },
      'routes-rows': { type: 'string' },
      'headline-baseline': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

type Values = ReturnType<typeof parse>['values']

function positiveInt(value: string, flag: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer, got '${value}'`)
  return n
}

function buildSpec(values: Values): GridSpec {
  const gridName = (values.grid ?? 'quick') as GridName
  if (!GRID_NAMES.includes(gridName)) throw new UsageError(`unknown grid '${values.grid}' (${GRID_NAMES.join(', ')})`)
  const seeds = values.seeds === undefined ? (gridName === 'quick' ? 5 : 30) : positiveInt(values.seeds, '--seeds')
  let spec = namedGrid(gridName, seeds, strategyNames())
  if (values['first-seed'] !== undefined) {
    const first = Number(values['first-seed'])
    if (!Number.isInteger(first) || first < 0) throw new UsageError(`--first-seed must be a non-negative integer`)
    spec = { ...spec, firstSeed: first }
  }
  if (values.rtt !== undefined) {
    const rtt = Number(values.rtt)
    if (!(rtt >= 0) || !Number.isFinite(rtt)) throw new UsageError('--rtt must be a non-negative number of ms')
    spec = { ...spec, rttMs: rtt }
  }
  const scales = list(values.scale)
  if (scales) {
    const ks = scales.map((v) => {
      const k = Number(v)
      return Number.isFinite(k) && k > 0 ? k : fail(`--scale takes positive numbers, got '${v}'`)
    })
    spec = { ...spec, scales: ks }
  }
  const scenarios = list(values.scenario)
  if (scenarios) {
    const chosen: Scenario[] = scenarios.includes('all')
      ? [...PAPER_SCENARIOS]
      : scenarios.map((name) => scenarioByName(name) ?? fail(`unknown scenario '${name}' (paper scenarios: ${PAPER_SCENARIOS.map((s) => s.name).join(', ')}; or synthetic-<clients>c-<requests>, real-trace-<requests>)`))
    spec = { ...spec, scenarios: chosen }
  }
  const strategies = list(values.strategy)
  if (strategies) {
    for (const s of strategies) if (!lookupStrategy(s)) fail(`unknown strategy '${s}' (${strategyNames().join(', ')})`)
    spec = { ...spec, strategies }
  }
  const servers = list(values.server)
  if (servers) {
    const kinds = servers.includes('all') ? [...SERVER_KINDS] : servers.map((s) => (isServerKind(s) ? s : fail(`unknown server '${s}' (${SERVER_KINDS.join(', ')})`)))
    spec = { ...spec, servers: kinds as ServerKind[] }
  }
  const feedbacks = list(values.feedback)
  if (feedbacks) {
    const modes = feedbacks.includes('all') ? [...FEEDBACK_MODES] : feedbacks.map((f) => ((FEEDBACK_MODES as readonly string[]).includes(f) ? (f as Feedback) : fail(`unknown feedback '${f}' (${FEEDBACK_MODES.join(', ')})`)))
    spec = { ...spec, feedbacks: modes }
  }
  const models = list(values['client-model'])
  if (models) {
    const chosen = models.includes('all') ? [...CLIENT_MODELS] : models.map((m) => (isClientModel(m) ? m : fail(`unknown client model '${m}' (${CLIENT_MODELS.join(', ')})`)))
    spec = { ...spec, clientModels: chosen as ClientModel[] }
  }
  return normalizeSpec(spec)
}

/** Rows of earlier JSON files that this grid does not have (same scenario, scale, server, client model, strategy, feedback). */
async function withIncluded(rows: SimRow[], files: string[]): Promise<SimRow[]> {
  const key = (r: SimRow) => `${r.scenario}|${r.scale ?? 1}|${r.server}|${r.clientModel}|${r.strategy}|${r.feedback}`
  const seen = new Set(rows.map(key))
  const merged = [...rows]
  for (const file of files) {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<GridJson>
    for (const row of parsed.rows ?? []) {
      if (seen.has(key(row))) continue
      seen.add(key(row))
      merged.push(row)
    }
  }
  return merged
}

/** The rows of the scale grids' JSON files, and the command that reproduces each. */
async function scaleRowsOf(files: string[]): Promise<{ rows: SimRow[]; commands: string[] }> {
  const rows: SimRow[] = []
  const commands: string[] = []
  for (const file of files) {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<GridJson>
    rows.push(...(parsed.rows ?? []))
    if (parsed.grid) commands.push(`npx polite-fetch simulate --grid ${parsed.grid.name} --seeds ${parsed.grid.seeds} --json ${file}`)
  }
  return { rows, commands }
}

async function writeScaleCharts(dir: string, rows: readonly SimRow[]): Promise<string[]> {
  const charts = scaleCharts(rows)
  await mkdir(dir, { recursive: true })
  for (const chart of charts) await writeFile(join(dir, chart.file), chart.svg)
  return charts.map((chart) => join(dir, chart.file))
}

function fail(message: string): never {
  throw new UsageError(message)
}

async function writeText(file: string, text: string): Promise<void> {
  await mkdir(dirname(resolve(file)), { recursive: true })
  await writeFile(file, text)
}

/** Scatter charts per server for the largest scenario at k = 1; timelines of UB and atb on one run. */
async function writeCharts(dir: string, spec: GridSpec, rows: readonly SimRow[]): Promise<Array<{ file: string; caption: string }>> {
  await mkdir(dir, { recursive: true })
  const files: Array<{ file: string; caption: string }> = []
  const scenario = spec.scenarios.find((s) => s.name === 'real-trace-800') ?? spec.scenarios[spec.scenarios.length - 1]!
  const feedback: Feedback = spec.feedbacks.includes('status-only') ? 'status-only' : spec.feedbacks[0]!
  const clientModel = spec.clientModels[0]!
  for (const server of [...new Set(rows.map((r) => r.server))]) {
    const group = rows.filter((r) => (r.scale ?? 1) === 1 && r.scenario === scenario.name && r.server === server && r.feedback === feedback && r.clientModel === clientModel)
    if (group.length === 0) continue
    const file = join(dir, `scatter-${scenario.name}-${server}-${feedback}.svg`)
    const caption = `429s vs completion time, ${scenario.name}, ${server}, ${feedback} (means over ${spec.seeds} seeds)`
    await writeFile(file, scatterSvg(group.map((r) => ({ label: strategyLabel(r.strategy), completionMs: r.completionMsMean, throttled: r.throttledMean })), {
      title: `${scenario.name} · ${server} · ${feedback}`,
      oracleCompletionMs: group[0]!.oracleCompletionMsMean,
    }))
    files.push({ file, caption })
  }
  const workload = generateWorkload(scenario, spec.firstSeed)
  for (const server of spec.servers.filter((s) => s.startsWith('token-bucket'))) {
    for (const strategy of ['exponential', 'atb'].filter((s) => spec.strategies.includes(s))) {
      const entry = lookupStrategy(strategy)!
      const metrics = runSimulation({
        workload,
        server: createServerModel(server, spec.quota, Date.UTC(2025, 0, 1)),
        feedback,
        strategy: entry.setup({ clients: scenario.clients, quota: spec.quota, seed: spec.firstSeed }),
        clientModel,
        signalPath: REAL_SIGNAL_PATH,
        seed: spec.firstSeed,
        rttMs: spec.rttMs,
        originMs: Date.UTC(2025, 0, 1),
        timeline: true,
      })
      const file = join(dir, `timeline-${scenario.name}-${server}-${feedback}-${strategy}.svg`)
      const caption = `${strategyLabel(strategy)}: admitted and 429 per second, ${scenario.name}, ${server}, ${feedback}, seed ${spec.firstSeed} (${metrics.throttled} 429s)`
      await writeFile(file, timelineSvg(metrics.timeline!, { title: `${strategyLabel(strategy)} · ${scenario.name} · ${server} · ${feedback} · seed ${spec.firstSeed}: ${metrics.throttled} 429s` }))
      files.push({ file, caption })
    }
  }
  return files
}

function summaryTable(rows: readonly SimRow[]): string {
  const header = ['scenario', 'k', 'server', 'feedback', 'client', 'strategy', '429s', '±', 'Δ429', 'time s', 'Δtime', 'oracle×', 'incomplete']
  const lines = rows.map((r) => [
    r.scenario, String(r.scale), r.server, r.feedback, r.clientModel, r.strategy,
    r.throttledMean.toFixed(1), r.throttledCi95.toFixed(1),
    r.throttledVsUbPct === null ? '—' : `${r.throttledVsUbPct.toFixed(1)}%`,
    (r.completionMsMean / 1000).toFixed(1), `${r.completionVsUbPct.toFixed(1)}%`, r.oracleRatio.toFixed(3),
    r.incompleteRuns > 0 ? `${r.incompleteRuns} cut off` : '',
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const row = (cells: string[]) => cells.map((c, i) => (i < 6 || i === header.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
  return `${[row(header), ...lines.map(row)].join('\n')}\n`
}

/** An earlier headline to show the current one beside: `{ source, rows }`, checked. */
async function headlineBaselineOf(file: string): Promise<HeadlineBaseline> {
  const json = JSON.parse(await readFile(file, 'utf8')) as Partial<HeadlineBaseline>
  if (typeof json.source !== 'string' || !Array.isArray(json.rows)) throw new Error(`--headline-baseline ${file}: expected { source, rows }`)
  return { source: json.source, rows: json.rows }
}

async function routesSectionOf(file: string): Promise<string[]> {
  const json = JSON.parse(await readFile(file, 'utf8')) as RoutesJson
  const scales = [...new Set(json.rows.map((r) => r.scale))].join(',')
  const feedbacks = [...new Set(json.rows.map((r) => r.feedback))].join(',')
  return renderRoutesSection(json, `npx polite-fetch simulate --routes --seeds ${json.seeds} --scale ${scales} --feedback ${feedbacks} --json ${file}`)
}

async function runRoutesMode(values: Values): Promise<number> {
  let seeds: number
  let firstSeed: number
  let scales: number[]
  let feedbacks: Feedback[]
  let strategies: string[]
  try {
    seeds = values.seeds === undefined ? 10 : positiveInt(values.seeds, '--seeds')
    firstSeed = values['first-seed'] === undefined ? 1 : positiveInt(values['first-seed'], '--first-seed')
    scales = (list(values.scale) ?? ['0.1', '1', '10', '60']).map((v) => {
      const k = Number(v)
      return Number.isFinite(k) && k > 0 ? k : fail(`--scale takes positive numbers, got '${v}'`)
    })
    feedbacks = (list(values.feedback) ?? ['status-only']).map((f) => ((FEEDBACK_MODES as readonly string[]).includes(f) ? (f as Feedback) : fail(`unknown feedback '${f}'`)))
    strategies = list(values.strategy) ?? ['atb']
    for (const name of strategies) if (!lookupStrategy(name)) fail(`unknown strategy '${name}' (${strategyNames().join(', ')})`)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`polite-fetch simulate: ${error.message}\n`)
    return 1
  }
  const started = performance.now()
  let result: Awaited<ReturnType<typeof runRoutesGrid>>
  try {
    result = await runRoutesGrid({ scales, seeds, firstSeed, feedbacks, strategies }, progressBar(process.stderr, 'simulate routes'))
  } catch (error) {
    process.stderr.write(`polite-fetch simulate: ${(error as Error).message}\n`)
    return 1
  }
  const seconds = (performance.now() - started) / 1000
  process.stderr.write(`Routes time: ${result.runs.length} runs in ${seconds.toFixed(1)} s (in-process; ${(seconds / result.runs.length * 1000).toFixed(0)} ms per run).\n`)
  process.stdout.write(`${textTable(ROUTES_TABLE_HEADER, routesTableLines(result.rows))}\n`)
  if (values.json) {
    const json: RoutesJson = { scenario: ROUTES_SCENARIO.name, seeds, firstSeed, rows: result.rows }
    await writeText(values.json, `${JSON.stringify(json, null, 2)}\n`)
  }
  return 0
}

async function runLive(values: Values): Promise<number> {
  const scenarioName = list(values.scenario)?.[0] ?? 'real-trace-800'
  const scenario = scenarioByName(scenarioName)
  if (!scenario) {
    process.stderr.write(`polite-fetch simulate: unknown scenario '${scenarioName}'\n`)
    return 1
  }
  const strategies = list(values.strategy) ?? ['exponential', 'atb']
  const unknown = strategies.filter((name) => lookupStrategy(name) === undefined)
  if (unknown.length > 0) {
    process.stderr.write(`polite-fetch simulate: unknown strategy '${unknown.join("', '")}'\n`)
    return 1
  }
  const feedback = (list(values.feedback)?.[0] ?? 'status-only') as Feedback
  if (!FEEDBACK_MODES.includes(feedback)) {
    process.stderr.write(`polite-fetch simulate: --feedback must be one of ${FEEDBACK_MODES.join(', ')}\n`)
    return 1
  }
  const server = list(values.server)?.[0] ?? 'token-bucket-continuous'
  if (!isServerKind(server)) {
    process.stderr.write(`polite-fetch simulate: --server must be one of ${SERVER_KINDS.join(', ')}\n`)
    return 1
  }
  const seedCount = values.seeds === undefined ? 3 : positiveInt(values.seeds, '--seeds')
  const firstSeed = values['first-seed'] === undefined ? 1 : positiveInt(values['first-seed'], '--first-seed')
  const timeScale = values['time-scale'] === undefined ? 20 : Number(values['time-scale'])
  if (!(Number.isFinite(timeScale) && timeScale > 0)) {
    process.stderr.write('polite-fetch simulate: --time-scale must be a positive number\n')
    return 1
  }
  const seeds = Array.from({ length: seedCount }, (_, i) => firstSeed + i)
  process.stderr.write(
    `live check: ${scenario.name}, ${server}, ${feedback}, seeds ${seeds.join(',')}, time x${timeScale} ` +
      `(sim: the mean of ${DEFAULT_SIM_DRAWS} draws of the pacers' randomness per seed; live: one run each)…\n`,
  )
  const rows = await runLiveCheck({ scenario, strategies, feedback, seeds, quota: PAPER_QUOTA, timeScale, server })
  const pct = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}%`
  process.stdout.write(
    `${textTable(
      ['strategy', 'feedback', 'seeds', '429s sim', '429s live', 'diff', 'completion s sim', 'completion s live', 'diff'],
      rows.map((r) => [
        r.strategy, r.feedback, r.seeds, +r.simThrottled.toFixed(1), +r.liveThrottled.toFixed(1), pct(r.throttledDiffPct),
        +(r.simCompletionMs / 1000).toFixed(1), +(r.liveCompletionMs / 1000).toFixed(1), pct(r.completionDiffPct),
      ]),
    )}\n`,
  )
  if (values.json) await writeText(values.json, `${JSON.stringify({ scenario: scenario.name, server, timeScale, rows }, null, 2)}\n`)
  return 0
}
