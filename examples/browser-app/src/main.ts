// The example page: three widgets drawing on one shared quota (the local quota
// server), a live chart, and a toggle between the polite-fetch service worker (one
// limiter for every tab), in-page lanes shared by the tabs without a worker (a leader
// tab paces them all), and plain in-page exponential backoff (one per tab).
//
// Query parameters: api (quota server URL), mode (worker | shared | page), type (classic |
// module worker), timeScale (the quota server's; scales the baseline's backoff only: the
// worker and the shared lanes run the default ATB, which needs no scaling), tag (1: label every request with x-request-id and x-attempt, for the
// end-to-end test's log of sends), store (memory: keep the shared lanes' pacer state in this
// tab only, the control run of a handover without IndexedDB).
import { atb, DeadlineError, exponential, memoryStore, type PoliteRequestInit } from 'polite-fetch'
import { registerPoliteFetch } from 'polite-fetch/register'
import { drawChart, type ChartSeries } from './chart.js'
import { hammer, pulses, type HammerOptions, type HammerResult, type PulseOptions } from './workload.js'

const params = new URLSearchParams(location.search)
const api = new URL(params.get('api') ?? 'http://127.0.0.1:8787').origin
const modeParam = params.get('mode')
const mode = modeParam === 'page' || modeParam === 'shared' ? modeParam : 'worker'
const tagRequests = params.get('tag') === '1'
const storeInMemory = params.get('store') === 'memory'
const workerType = params.get('type') === 'module' ? 'module' : 'classic'
const timeScale = Math.max(1, Number(params.get('timeScale') ?? '1') || 1)
const WIDGETS = ['Inventory', 'Prices', 'Orders']
const CHART_SECONDS = 30

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

function linkTo(nextMode: 'worker' | 'shared' | 'page'): string {
  const next = new URLSearchParams(params)
  next.set('mode', nextMode)
  return `?${next.toString()}`
}

/** "Without the worker" must really be without it: unregister, and reload once if one still controls us. */
async function dropWorker(): Promise<boolean> {
  if (!('serviceWorker' in navigator)) return false
  const registrations = await navigator.serviceWorker.getRegistrations()
  await Promise.all(registrations.map((r) => r.unregister()))
  if (navigator.serviceWorker.controller && !sessionStorage.getItem('polite-fetch-demo:reloaded')) {
    sessionStorage.setItem('polite-fetch-demo:reloaded', '1')
    location.reload()
    return true
  }
  sessionStorage.removeItem('polite-fetch-demo:reloaded')
  return false
}

/** The smallest finite rate any scope currently allows, from the limiter's stats (shape-tolerant). */
function currentRate(stats: unknown): number | undefined {
  let best: number | undefined
  const visit = (value: unknown, depth: number) => {
    if (depth > 4 || typeof value !== 'object' || value === null) return
    const rate = (value as { ratePerSecond?: unknown }).ratePerSecond
    if (typeof rate === 'number' && Number.isFinite(rate)) best = best === undefined ? rate : Math.min(best, rate)
    for (const child of Object.values(value)) visit(child, depth + 1)
  }
  visit(stats, 0)
  return best
}

async function main(): Promise<void> {
  $('with-worker').setAttribute('href', linkTo('worker'))
  $('shared-tabs').setAttribute('href', linkTo('shared'))
  $('without-worker').setAttribute('href', linkTo('page'))
  $(mode === 'worker' ? 'with-worker' : mode === 'shared' ? 'shared-tabs' : 'without-worker').classList.add('active')
  if (mode !== 'worker' && (await dropWorker())) return

  const script = `./${workerType === 'module' ? 'sw.mjs' : 'sw.js'}?api=${encodeURIComponent(api)}`
  // The baseline: the paper's exponential backoff, its waits compressed like the quota server's clock.
  const baseline = exponential({
    minDelayMs: 100 / timeScale,
    baseMs: 1000 / timeScale,
    capMinMs: 30_000 / timeScale,
    capMaxMs: 34_000 / timeScale,
    roundMs: 0,
  })
  // The shared in-page lane runs the worker's strategy (src/sw.ts): the default ATB.
  const shared = atb()
  // Every send of a request carries its id and its attempt number (a count of sends), so the
  // quota server's log can show that no attempt went out twice.
  const tab = crypto.randomUUID().slice(0, 8)
  const sends = new Map<string, number>()
  const tagged = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers)
    const id = headers.get('x-request-id')
    if (id !== null) {
      const attempt = (sends.get(id) ?? 0) + 1
      sends.set(id, attempt)
      headers.set('x-attempt', String(attempt))
    }
    return fetch(input, { ...init, headers })
  }
  const polite = registerPoliteFetch(script, {
    workerType,
    forceInPage: mode !== 'worker',
    // Each tab alone only for the baseline; a page the worker does not control (a hard reload)
    // then has its calls paced by the worker's lanes.
    shareTabs: mode !== 'page',
    inPage:
      mode === 'shared'
        ? {
            strategy: shared,
            persistIntervalMs: 250,
            deadlineMs: 30_000,
            ...(tagRequests ? { fetch: tagged } : {}),
            ...(storeInMemory ? { store: memoryStore() } : {}),
          }
        : { strategy: baseline },
  })
  const settled = await polite.ready
  $('status').textContent =
    settled === 'worker'
      ? `Requests to ${api}/api/ go through the polite-fetch service worker (${workerType}): one limiter for every tab.`
      : mode === 'shared'
        ? `In-page lanes shared by the tabs: a leader tab paces every tab's calls (no service worker).`
        : `In-page client with exponential backoff: each tab backs off on its own.`
  let seq = 0
  const request = (url: string, init: PoliteRequestInit = {}) => {
    if (!tagRequests) return polite.fetch(url, init)
    const headers = new Headers(init.headers)
    headers.set('x-request-id', `${tab}-${++seq}`)
    return polite.fetch(url, { ...init, headers })
  }

  // Widgets.
  const widgets = WIDGETS.map((name, index) => {
    const card = document.createElement('article')
    card.className = 'widget'
    card.innerHTML = `<h2>${name}</h2><div class="figures">ok <b class="ok">0</b> · 429 <b class="throttled">0</b> · last <b class="last">–</b></div><button>Load 10</button>`
    $('widgets').append(card)
    const figures = { ok: 0, throttled: 0 }
    const show = (status: number) => {
      if (status === 429) figures.throttled++
      else if (status < 400) figures.ok++
      card.querySelector('.ok')!.textContent = String(figures.ok)
      card.querySelector('.throttled')!.textContent = String(figures.throttled)
      card.querySelector('.last')!.textContent = String(status)
    }
    const url = () => `${api}/api/widget/${index}`
    card.querySelector('button')!.addEventListener('click', () => {
      void hammer((u) => request(u), { requests: 10, concurrency: 2, url }, show)
    })
    return { show, url }
  })

  const run = (options: Omit<HammerOptions, 'url'>): Promise<HammerResult> =>
    hammer(
      (u) => request(u),
      { ...options, url: (i) => widgets[i % widgets.length]!.url() },
      (status, i) => widgets[i % widgets.length]!.show(status),
    )

  $('hammer').addEventListener('click', async () => {
    $('hammer-result').textContent = 'running…'
    const result = await run({ requests: 60, concurrency: 4 })
    const throttled = result.statuses.filter((s) => s === 429).length
    $('hammer-result').textContent = `${result.statuses.length} settled in ${(result.elapsedMs / 1000).toFixed(1)} s; this tab saw ${throttled} × 429`
  })

  // Chart: the quota server's per-second counts (ground truth across all tabs) and our rate.
  const series: ChartSeries = { admitted: [], throttled: [], rate: [] }
  const rateBySecond = new Map<number, number | undefined>()
  const tick = async () => {
    try {
      const [server, stats] = await Promise.all([
        fetch(`${api}/__stats`).then((r) => r.json() as Promise<{ admitted: number; rejected: number; perSecond: { second: number; admitted: number; rejected: number }[] }>),
        polite.stats().catch(() => undefined),
      ])
      const last = server.perSecond.at(-1)?.second ?? 0
      const nowSecond = Math.max(last, Math.floor((Date.now() - (server as unknown as { startedAt: number }).startedAt) / 1000))
      rateBySecond.set(nowSecond, currentRate(stats?.stats))
      const bySecond = new Map(server.perSecond.map((s) => [s.second, s]))
      series.admitted = []
      series.throttled = []
      series.rate = []
      for (let s = nowSecond - CHART_SECONDS + 1; s <= nowSecond; s++) {
        series.admitted.push(bySecond.get(s)?.admitted ?? 0)
        series.throttled.push(bySecond.get(s)?.rejected ?? 0)
        series.rate.push(rateBySecond.get(s))
      }
      for (const key of rateBySecond.keys()) if (key < nowSecond - CHART_SECONDS) rateBySecond.delete(key)
      drawChart($('chart'), series)
      $('totals').textContent = `server totals: ${server.admitted} admitted, ${server.rejected} × 429`
    } catch {
      $('totals').textContent = `quota server at ${api} unreachable`
    }
  }
  setInterval(() => void tick(), 500)
  void tick()

  // Calls this tab's lane gave up on, by reason (a leader counts its followers' calls too).
  const giveUps: Record<string, number> = {}
  polite.on('give-up', (detail) => {
    const reason = String((detail as { reason?: unknown }).reason)
    giveUps[reason] = (giveUps[reason] ?? 0) + 1
  })
  /** `count` calls at once, all aborted after `abortAfterMs`: how each ended. */
  const abortable = async (count: number, abortAfterMs: number) => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), abortAfterMs)
    const ends = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        request(widgets[i % widgets.length]!.url(), { signal: controller.signal }).then(
          async (response) => {
            await response.arrayBuffer().catch(() => {})
            return String(response.status)
          },
          (error: unknown) => (error instanceof Error || error instanceof DOMException ? error.name : String(error)),
        ),
      ),
    )
    return ends
  }
  /** `count` calls at once with a short deadline: the failures' class and fields. */
  const deadline = async (count: number, deadlineMs: number) =>
    Promise.all(
      Array.from({ length: count }, (_, i) =>
        request(widgets[i % widgets.length]!.url(), { politeFetch: { deadlineMs } }).then(
          async (response) => {
            await response.arrayBuffer()
            return { status: response.status }
          },
          (error: unknown) => ({
            name: error instanceof Error ? error.name : String(error),
            typed: error instanceof DeadlineError,
            retryAt: error instanceof DeadlineError ? typeof error.retryAt : 'none',
          }),
        ),
      ),
    )

  // For the end-to-end test (and the curious, from DevTools).
  Object.assign(window, {
    demo: {
      mode: settled,
      run,
      pulse: (options: Omit<PulseOptions, 'url'>) =>
        pulses((u) => request(u), { ...options, url: (i) => widgets[i % widgets.length]!.url() }),
      stats: () => polite.stats(),
      giveUps,
      abortable,
      deadline,
    },
  })
}

void main()
