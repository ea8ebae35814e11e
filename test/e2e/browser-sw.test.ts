// The service-worker deployment in a real headless Chromium: three tabs hammer one
// status-only quota, first each with its own in-page exponential backoff, then all
// through the polite-fetch worker (one limiter for the origin); then the browser stops
// the worker and a tab fires again, paced by the state the worker left in IndexedDB.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildBrowserApp } from '../../examples/browser-app/build.js'
import { serveStatic, type StaticServer } from '../../examples/browser-app/static-server.js'
import { startQuotaServer, type QuotaServer } from '../../src/sim/quota-server.js'
import { launchChromium, stopServiceWorkers, type Chromium } from './helpers/browser-harness.js'
import {
  CONCURRENCY_PER_TAB,
  demoUrl,
  openDemoAt,
  QUOTA,
  REQUESTS_PER_TAB,
  runDemo,
  TABS,
  TIME_SCALE,
  WINDOW_MS,
  type HammerResult,
} from './helpers/demo-page.js'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

let outDir: string
let site: StaticServer
let quota: QuotaServer
let browser: Chromium

const openDemo = (mode: 'worker' | 'page', type: 'classic' | 'module' = 'classic'): Promise<Page> =>
  openDemoAt(browser, demoUrl({ siteUrl: site.url, apiUrl: quota.url, timeScale: TIME_SCALE }, mode, { type }))

const run = runDemo

/** 429s the quota server answered while `work` ran (server-side truth, across every tab). */
async function rejectedDuring<T>(work: () => Promise<T>): Promise<{ rejected: number; admitted: number; value: T }> {
  const before = quota.stats()
  const value = await work()
  const after = quota.stats()
  return { rejected: after.rejected - before.rejected, admitted: after.admitted - before.admitted, value }
}

function expectAllSettled(results: HammerResult[], requests: number): void {
  for (const result of results) {
    expect(result.failures).toEqual([])
    expect(result.statuses).toHaveLength(requests)
    expect(result.statuses.every((status) => status === 200)).toBe(true)
  }
}

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'polite-fetch-browser-app-'))
  await buildBrowserApp({ outDir })
  site = await serveStatic(outDir)
  quota = await startQuotaServer({ feedback: 'status-only', quota: QUOTA, timeScale: TIME_SCALE })
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await quota?.close()
  await site?.close()
  if (outDir) await rm(outDir, { recursive: true, force: true })
})

describe('polite-fetch service worker in Chromium', () => {
  const figures: Record<string, number> = {}

  it('cuts the 429s of three tabs by at least 80% against in-page exponential backoff, and resumes paced after a restart', async () => {
    // Without the worker: each tab backs off on its own.
    const plainTabs = await Promise.all(Array.from({ length: TABS }, () => openDemo('page')))
    for (const tab of plainTabs) expect(await tab.evaluate(() => window.demo!.mode)).toBe('in-page')
    const without = await rejectedDuring(() =>
      Promise.all(plainTabs.map((tab) => run(tab, { requests: REQUESTS_PER_TAB, concurrency: CONCURRENCY_PER_TAB }))),
    )
    expectAllSettled(without.value, REQUESTS_PER_TAB)
    figures['msWithout'] = Math.max(...without.value.map((r) => r.elapsedMs))
    // Closed before any worker exists: clients.claim() would otherwise adopt them.
    for (const tab of plainTabs) await tab.close()

    // With the worker: one limiter for the origin.
    const first = await openDemo('worker')
    const others = await Promise.all(Array.from({ length: TABS - 1 }, () => openDemo('worker')))
    const workerTabs = [first, ...others]
    for (const tab of workerTabs) expect(await tab.evaluate(() => window.demo!.mode)).toBe('worker')
    await new Promise((r) => setTimeout(r, 1500)) // let the quota refill as it had before the first phase
    const withWorker = await rejectedDuring(() =>
      Promise.all(workerTabs.map((tab) => run(tab, { requests: REQUESTS_PER_TAB, concurrency: CONCURRENCY_PER_TAB }))),
    )
    expectAllSettled(withWorker.value, REQUESTS_PER_TAB)
    figures['msWith'] = Math.max(...withWorker.value.map((r) => r.elapsedMs))
    for (const result of withWorker.value) expect(result.paced).toBe(REQUESTS_PER_TAB)
    await mkdir(join(repo, 'docs/images'), { recursive: true })
    await first.waitForTimeout(700) // one more chart tick
    await first.screenshot({ path: join(repo, 'docs/images/browser-app.png'), fullPage: true })

    figures['rejectedWithout'] = without.rejected
    figures['rejectedWith'] = withWorker.rejected
    expect(without.rejected).toBeGreaterThan(50)
    expect(withWorker.rejected).toBeLessThanOrEqual(0.2 * without.rejected)

    // The browser stops the worker; the restarted one must pace from the saved state. The tab
    // refreshes its widgets in bursts of 30 every 2 s: 15 per second on average, under the quota,
    // but each burst is larger than the server's bucket, so only a paced lane gets through clean.
    const refreshes = { burst: 30, everyMs: 2_000, durationMs: WINDOW_MS }
    const pulse = (page: Page) => page.evaluate((o) => window.demo!.pulse(o), refreshes)
    const before = await rejectedDuring(() => pulse(first))
    const instanceBefore = (await first.evaluate(() => window.demo!.stats())).worker?.instanceId
    await first.waitForTimeout(600) // > persistIntervalMs (250) of the example worker
    await stopServiceWorkers(first)
    const after = await rejectedDuring(() => pulse(first))
    const instanceAfter = (await first.evaluate(() => window.demo!.stats())).worker?.instanceId
    expect(instanceBefore).toBeDefined()
    expect(instanceAfter).toBeDefined()
    expect(instanceAfter).not.toBe(instanceBefore)
    for (const result of [before.value, after.value]) {
      expect(result.failures).toEqual([])
      expect(result.statuses.every((status) => status === 200)).toBe(true)
      expect(result.paced).toBe(result.statuses.length)
    }
    figures['rejectedBeforeRestart'] = before.rejected
    figures['rejectedAfterRestart'] = after.rejected
    figures['admittedBeforeRestart'] = before.admitted
    figures['admittedAfterRestart'] = after.admitted
    expect(after.rejected).toBeLessThanOrEqual(before.rejected)
    // Chromium logs every 4xx as a console error ("Failed to load resource"); anything else is a defect.
    expect(browser.problems.filter((p) => !p.includes('Failed to load resource'))).toEqual([])
    process.stdout.write(`browser-sw figures: ${JSON.stringify(figures)}\n`)
  })

  it('runs as a module worker too', async () => {
    for (const open of browser.context.pages()) await open.close()
    const page = await openDemo('worker', 'module')
    expect(await page.evaluate(() => window.demo!.mode)).toBe('worker')
    const result = await run(page, { requests: 8, concurrency: 2 })
    expect(result.failures).toEqual([])
    expect(result.paced).toBe(8)
    const workers = browser.context.serviceWorkers().map((w) => w.url())
    expect(workers.some((url) => url.includes('/sw.mjs'))).toBe(true)
  })

  it("drops the calls a page aborts from the worker's lane (Chromium never aborts the worker's request.signal)", async () => {
    for (const open of browser.context.pages()) await open.close()
    const page = await openDemo('worker')
    await page.waitForTimeout(300) // the page learns that the worker reads its calls' names
    type Lane = { queued: number; inFlight: number; giveUps: number }
    const lanes = async () => ((await page.evaluate(() => window.demo!.stats())).stats ?? []) as Lane[]
    const giveUpsBefore = (await lanes()).reduce((sum, lane) => sum + lane.giveUps, 0)
    const ends = await page.evaluate(() => window.demo!.abortable(60, 300))
    const aborted = ends.filter((end) => end === 'AbortError').length
    expect(aborted).toBeGreaterThan(0)
    await page.waitForTimeout(500)
    const after = await lanes()
    // Before, the aborted calls stayed queued in the worker and went out later, one by one.
    expect(after.reduce((sum, lane) => sum + lane.queued + lane.inFlight, 0)).toBe(0)
    // Each as a give-up 'aborted', but for one whose answer reached the worker before the page's abort did.
    const giveUps = after.reduce((sum, lane) => sum + lane.giveUps, 0) - giveUpsBefore
    expect(giveUps).toBeGreaterThan(0)
    expect(giveUps).toBeLessThanOrEqual(aborted)
  })

  it("honours a page call's politeFetch.deadlineMs in the worker (the worker's own is 30 s)", async () => {
    for (const open of browser.context.pages()) await open.close()
    const page = await openDemo('worker')
    expect(await page.evaluate(() => window.demo!.mode)).toBe('worker')
    // 40 calls at once with a 400 ms deadline, more than the quota's bucket of 20: those the lane
    // cannot send in time get the worker's 503 give-up. Before, the option never reached the
    // worker, which held every call up to its own 30 s deadline: 40 × 200, no 503.
    const probes = await page.evaluate(() => window.demo!.deadline(40, 400))
    const statuses = probes.map((probe) => probe.status ?? probe.name)
    const count = (status: number) => statuses.filter((s) => s === status).length
    process.stdout.write(`browser-sw deadline: ${JSON.stringify({ calls: 40, deadlineMs: 400, ok: count(200), gaveUp: count(503) })}\n`)
    expect(count(503)).toBeGreaterThan(0)
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true)
  })

  it('sends a 2 MiB upload on to an HTTP/1.1 server (Chromium streams request bodies only over HTTP/2)', async () => {
    for (const open of browser.context.pages()) await open.close()
    const page = await openDemo('worker')
    expect(await page.evaluate(() => window.demo!.mode)).toBe('worker')
    const sent = await page.evaluate(async (api) => {
      try {
        const response = await fetch(`${api}/api/upload`, { method: 'POST', body: new Uint8Array(2 * 1024 * 1024) })
        return `${response.status} ${response.headers.get('x-polite-fetch')}`
      } catch (error) {
        return String(error)
      }
    }, quota.url)
    expect(sent).toBe('200 paced')
  })
})
