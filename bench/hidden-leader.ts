// npm run bench:hidden-leader [-- --runs N --hidden-ms MS] — does a background leader tab slow
// the tab in front? Tabs sharing lanes without a service worker pace every call in the tab that
// leads the scope, and a user's leader is often a tab left in the background, whose timers
// Chromium throttles (at most one wake-up a second; after five minutes hidden, chained timers
// once a minute). playwright-core keeps every page it drives visible and launches with that
// throttling off, so this bench drives the system Chromium over the DevTools protocol
// (bench/raw-chromium.ts), headless, with the browser example in `shared` mode on the
// end-to-end suite's quota (20 per second, a bucket of 20, status-only, over real HTTP):
//
//  - hidden leader: tab A calls first (it leads), tab B opens in front of it in the same window
//    (A is hidden, its timers throttled), waits `--hidden-ms`, and runs 60 calls, 4 at a time;
//  - visible leader: the same with B in a window of its own, so both tabs stay visible;
//  - hidden page: tab A runs the 60 calls itself (its own lanes) behind a blank tab in front.
//
// Each run is a fresh browser; the arms alternate. Prints the medians and writes
// bench/results/hidden-leader.json. Needs /usr/bin/chromium (or CHROMIUM_PATH).
import { mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildBrowserApp } from '../examples/browser-app/build.js'
import { serveStatic } from '../examples/browser-app/static-server.js'
import { startQuotaServer } from '../src/sim/quota-server.js'
import { textTable } from '../src/sim/live/text-table.js'
import { CONCURRENCY_PER_TAB, demoUrl, QUOTA, REQUESTS_PER_TAB, TIME_SCALE } from '../test/e2e/helpers/demo-page.js'
import { launchRawChromium, type RawTab } from './raw-chromium.js'

const { values: flags } = parseArgs({ options: { runs: { type: 'string', default: '5' }, 'hidden-ms': { type: 'string', default: '500' } } })
const RUNS = Number(flags.runs)
const HIDDEN_MS = Number(flags['hidden-ms'])
if (!(Number.isInteger(RUNS) && RUNS >= 1 && RUNS <= 20)) throw new Error(`--runs must be a whole number in 1..20, got ${flags.runs}`)
if (!(Number.isFinite(HIDDEN_MS) && HIDDEN_MS >= 0 && HIDDEN_MS <= 600_000)) throw new Error(`--hidden-ms must be 0..600000, got ${flags['hidden-ms']}`)

type Arm = 'hidden leader' | 'visible leader' | 'hidden page'
const ARMS: Arm[] = ['hidden leader', 'visible leader', 'hidden page']
interface Run {
  arm: Arm
  elapsedMs: number
  throttled: number
  visibility: string[]
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function demoReady(tab: RawTab): Promise<void> {
  for (let waitedMs = 0; waitedMs < 20_000; waitedMs += 100) {
    if (await tab.evaluate<boolean>('window.demo !== undefined')) return
    await sleep(100)
  }
  throw new Error('the demo page did not start within 20 s')
}

const outDir = await mkdtemp(join(tmpdir(), 'polite-fetch-hidden-leader-'))
await buildBrowserApp({ outDir })
const site = await serveStatic(outDir)
const quota = await startQuotaServer({ feedback: 'status-only', quota: QUOTA, timeScale: TIME_SCALE })
const runs: Run[] = []
const loadBefore = loadavg()[0]!
try {
  for (let i = 0; i < ARMS.length * RUNS; i++) {
    const arm = ARMS[i % ARMS.length]!
    // A fresh sharing group per run, so that no pacer state is carried over.
    const url = demoUrl({ siteUrl: site.url, apiUrl: quota.url, timeScale: TIME_SCALE }, 'shared', { tag: `run-${i}` })
    const browser = await launchRawChromium()
    try {
      const leader = await browser.open(url)
      await demoReady(leader)
      const mode = await leader.evaluate<string>('window.demo.mode')
      if (mode !== 'in-page') throw new Error(`the demo runs in mode ${mode}, not in-page lanes shared by the tabs`)
      await leader.evaluate('window.demo.run({ requests: 1, concurrency: 1 })')
      const front = arm === 'hidden page' ? leader : await browser.open(url, arm === 'visible leader')
      await demoReady(front)
      if (arm === 'hidden page') await (await browser.open('about:blank')).activate()
      else await front.activate()
      await sleep(HIDDEN_MS)
      const visibility = [await leader.evaluate<string>('document.visibilityState'), await front.evaluate<string>('document.visibilityState')]
      quota.reset()
      const before = quota.stats().rejected
      const result = await front.evaluate<{ elapsedMs: number; statuses: number[]; failures: string[] }>(
        `window.demo.run(${JSON.stringify({ requests: REQUESTS_PER_TAB, concurrency: CONCURRENCY_PER_TAB })})`,
      )
      if (result.failures.length > 0 || result.statuses.length !== REQUESTS_PER_TAB) throw new Error(`calls failed: ${result.failures.join('; ')}`)
      const leaders = await front.evaluate<Record<string, string>>('window.demo.stats().then((s) => s.tabs?.leaders ?? {})')
      const leaderId = await leader.evaluate<string>('window.demo.stats().then((s) => s.tabs?.tabId)')
      if (!Object.values(leaders).includes(leaderId)) throw new Error(`the first tab did not lead: ${JSON.stringify(leaders)}, ${leaderId}`)
      runs.push({ arm, elapsedMs: Math.round(result.elapsedMs), throttled: quota.stats().rejected - before, visibility })
    } finally {
      await browser.close()
    }
  }
} finally {
  await quota.close()
  await site.close()
  await rm(outDir, { recursive: true, force: true })
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const arms = ARMS.map((arm) => {
  const mine = runs.filter((run) => run.arm === arm)
  return { arm, visibility: mine[0]!.visibility.join(' / '), medianMs: median(mine.map((r) => r.elapsedMs)), median429s: median(mine.map((r) => r.throttled)), runs: mine }
})
console.log(
  textTable(
    ['arm', 'leader / calling tab', 'median s', 'median 429s', 'each run s'],
    arms.map((a) => [a.arm, a.visibility, (a.medianMs / 1000).toFixed(2), a.median429s, a.runs.map((r) => (r.elapsedMs / 1000).toFixed(1)).join(', ')]),
  ),
)
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'hidden-leader.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), hiddenMs: HIDDEN_MS, loadBefore, arms }, null, 2) + '\n')
console.log(`\nwrote ${out}`)
