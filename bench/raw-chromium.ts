// Chromium driven over the DevTools protocol directly, for what playwright-core hides: it keeps
// every page it attaches to visible (and launches with background timer throttling off), so a
// background tab's throttled timers can only be seen in a browser it does not drive. Tabs
// opened here share one window; the tab in front is visible, the others are hidden and the
// browser throttles their timers as it does for a user's background tabs.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/e2e/helpers/browser-harness.js'

export interface RawTab {
  id: string
  /** Evaluate `expression` in the page, awaiting a promise; returns its JSON value. */
  evaluate<T>(expression: string): Promise<T>
  /** Bring this tab to the front of its window (the others become hidden). */
  activate(): Promise<void>
  close(): Promise<void>
}

export interface RawChromium {
  /** Open `url` in a new tab of the window, in front; `newWindow`: in a window of its own. */
  open(url: string, newWindow?: boolean): Promise<RawTab>
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function devtoolsPort(userDataDir: string): Promise<number> {
  for (let waitedMs = 0; waitedMs < 20_000; waitedMs += 100) {
    const text = await readFile(join(userDataDir, 'DevToolsActivePort'), 'utf8').catch(() => '')
    const port = Number(text.split('\n')[0])
    if (port > 0) return port
    await sleep(100)
  }
  throw new Error('Chromium did not open its DevTools port within 20 s')
}

function connect(url: string): Promise<{ send(method: string, params?: object): Promise<any>; close(): void }> {
  const socket = new WebSocket(url)
  let nextId = 0
  const waiting = new Map<number, (reply: any) => void>()
  socket.on('message', (data) => {
    const reply = JSON.parse(String(data))
    waiting.get(reply.id)?.(reply)
    waiting.delete(reply.id)
  })
  return new Promise((resolve, reject) => {
    socket.once('error', reject)
    socket.once('open', () =>
      resolve({
        send: (method, params = {}) =>
          new Promise((answer) => {
            const id = ++nextId
            waiting.set(id, answer)
            socket.send(JSON.stringify({ id, method, params }))
          }),
        close: () => socket.close(),
      }),
    )
  })
}

export async function launchRawChromium(): Promise<RawChromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'polite-fetch-raw-chromium-'))
  const child: ChildProcess = spawn(CHROMIUM_PATH, [...CHROMIUM_ARGS, '--remote-debugging-port=0', `--user-data-dir=${userDataDir}`, 'about:blank'], { stdio: 'ignore' })
  const port = await devtoolsPort(userDataDir)
  const http = `http://127.0.0.1:${port}`
  const sockets: Array<{ close(): void }> = []
  return {
    async open(url, newWindow = false) {
      let target: { id: string; webSocketDebuggerUrl: string }
      if (newWindow) {
        const { webSocketDebuggerUrl } = (await (await fetch(`${http}/json/version`)).json()) as { webSocketDebuggerUrl: string }
        const browser = await connect(webSocketDebuggerUrl)
        const reply = await browser.send('Target.createTarget', { url, newWindow: true })
        browser.close()
        const id = reply.result.targetId as string
        const list = (await (await fetch(`${http}/json/list`)).json()) as Array<{ id: string; webSocketDebuggerUrl: string }>
        target = list.find((t) => t.id === id)!
      } else {
        target = (await (await fetch(`${http}/json/new?${encodeURIComponent(url)}`, { method: 'PUT' })).json()) as { id: string; webSocketDebuggerUrl: string }
      }
      const session = await connect(target.webSocketDebuggerUrl)
      sockets.push(session)
      const tab: RawTab = {
        id: target.id,
        async evaluate<T>(expression: string) {
          const reply = await session.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })
          if (reply.error) throw new Error(reply.error.message)
          if (reply.result.exceptionDetails) throw new Error(reply.result.exceptionDetails.exception?.description ?? reply.result.exceptionDetails.text)
          return reply.result.result.value as T
        },
        async activate() {
          await fetch(`${http}/json/activate/${target.id}`)
        },
        async close() {
          await fetch(`${http}/json/close/${target.id}`)
        },
      }
      for (let waitedMs = 0; waitedMs < 20_000; waitedMs += 100) {
        if (await tab.evaluate<boolean>('document.readyState === "complete"').catch(() => false)) return tab
        await sleep(100)
      }
      throw new Error(`${url} did not load within 20 s`)
    },
    async close() {
      for (const socket of sockets) socket.close()
      child.kill()
      await new Promise((resolve) => child.once('exit', resolve))
      await rm(userDataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
    },
  }
}
