// Real headless Chromium for the end-to-end suite: the system package (/usr/bin/chromium)
// driven by playwright-core, each run in a fresh user data dir so no service worker,
// IndexedDB or cache survives from an earlier run.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface Chromium {
  context: BrowserContext
  /** Console errors and page errors seen so far, for assertion messages. */
  problems: string[]
  newPage(url: string): Promise<Page>
  close(): Promise<void>
}

/**
 * `backForwardCache`: keep Chromium's back/forward cache on, as in a user's browser
 * (playwright-core turns it off with --disable-back-forward-cache).
 */
export async function launchChromium(options: { backForwardCache?: boolean } = {}): Promise<Chromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'polite-fetch-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 840, height: 720 },
    ...(options.backForwardCache === true ? { ignoreDefaultArgs: ['--disable-back-forward-cache'] } : {}),
  })
  const problems: string[] = []
  return {
    context,
    problems,
    async newPage(url) {
      const page = await context.newPage()
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`)
      })
      await page.goto(url)
      return page
    },
    async close() {
      await context.close()
      await rm(userDataDir, { recursive: true, force: true })
    },
  }
}

/** Stop every service worker of the browser through the DevTools protocol (as the browser does when idle). */
export async function stopServiceWorkers(page: Page): Promise<void> {
  const session = await page.context().newCDPSession(page)
  try {
    await session.send('ServiceWorker.enable')
    await session.send('ServiceWorker.stopAllWorkers')
  } finally {
    await session.detach()
  }
}

/** A hard reload (shift-reload): the page loads around its service worker, which will not control it. */
export async function hardReload(page: Page): Promise<void> {
  const session = await page.context().newCDPSession(page)
  try {
    await session.send('Page.enable')
    const loaded = new Promise<void>((resolve) => session.once('Page.loadEventFired', () => resolve()))
    await session.send('Page.reload', { ignoreCache: true })
    await loaded
  } finally {
    await session.detach()
  }
}
