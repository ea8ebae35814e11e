// The example page (examples/browser-app) as the end-to-end tests drive it: its
// `window.demo` handle, and opening it in a tab.
import type { Page } from 'playwright-core'
import type { Chromium } from './browser-harness.js'

/**
 * The workload both browser tests drive: the paper's 80 per minute compressed 15×, i.e. 20 per wall
 * second with a bucket of 20, a partner gateway's quota. The pages' ATB runs unscaled on it; only the
 * exponential baseline has its backoff divided by TIME_SCALE (the page's `timeScale` parameter).
 */
export const TIME_SCALE = 15
export const QUOTA = { capacity: 20, perMinute: 80 }
export const TABS = 3
export const REQUESTS_PER_TAB = 60
export const CONCURRENCY_PER_TAB = 4
/** The windows compared before and after a restart or a handover. */
export const WINDOW_MS = 10_000

export type DemoMode = 'worker' | 'shared' | 'page'

export interface HammerResult {
  statuses: number[]
  paced: number
  failures: string[]
  elapsedMs: number
}

export interface DemoStats {
  mode: 'worker' | 'in-page'
  stats: unknown
  worker?: { instanceId: string; startedAt: number }
  tabs?: { shared: boolean; tabId: string; leaders: Record<string, string | undefined> }
}

export interface DeadlineProbe {
  status?: number
  name?: string
  typed?: boolean
  retryAt?: string
}

export interface RunOptions {
  requests: number
  concurrency: number
  durationMs?: number
}

declare global {
  interface Window {
    demo?: {
      mode: 'worker' | 'in-page'
      run(options: RunOptions): Promise<HammerResult>
      pulse(options: { burst: number; everyMs: number; durationMs: number }): Promise<HammerResult>
      stats(): Promise<DemoStats>
      giveUps: Record<string, number>
      abortable(count: number, abortAfterMs: number): Promise<string[]>
      deadline(count: number, deadlineMs: number): Promise<DeadlineProbe[]>
    }
  }
}

export interface DemoSite {
  siteUrl: string
  apiUrl: string
  timeScale: number
}

export function demoUrl(site: DemoSite, mode: DemoMode, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({ api: site.apiUrl, mode, type: 'classic', timeScale: String(site.timeScale), ...extra })
  return `${site.siteUrl}/index.html?${query.toString()}`
}

export async function openDemoAt(browser: Chromium, url: string): Promise<Page> {
  const page = await browser.newPage(url)
  await page.waitForFunction(() => window.demo !== undefined, undefined, { timeout: 20_000 })
  return page
}

export const runDemo = (page: Page, options: RunOptions) => page.evaluate((o) => window.demo!.run(o), options)
