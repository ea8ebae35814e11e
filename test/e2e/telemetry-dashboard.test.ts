// The operator's dashboard (GET /) in a real headless Chromium: a live fleet reports over
// HTTP from several loopback addresses and two tenants; the page, given the admin token in
// its URL fragment, shows every scope with its clients, rates and fair share and keeps
// refreshing. Its screenshot is the one in docs/telemetry.md.
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve } from '../../src/server/serve.js'
import type { RunningServer } from '../../src/server/serve.js'
import { launchChromium, type Chromium } from './helpers/browser-harness.js'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const ADMIN = 'operator-secret'
const FLEET = [
  { token: 'shop-token', scope: 'https://api.example.com', clients: 12, throttleEvery: 4 },
  { token: 'shop-token', scope: 'https://search.example.com', clients: 5, throttleEvery: 0 },
  { token: 'ops-token', scope: 'https://internal.example', clients: 3, throttleEvery: 9 },
]

describe('telemetry dashboard in Chromium', () => {
  let server: RunningServer
  let browser: Chromium
  let timer: NodeJS.Timeout | undefined
  const agents: Agent[] = []

  beforeAll(async () => {
    server = await serve({
      port: 0,
      options: {
        auth: { tokens: { 'shop-token': { tenant: 'shop', scopes: '*' }, 'ops-token': { tenant: 'ops', scopes: '*' } } },
        adminToken: ADMIN,
        quotas: { 'https://api.example.com': { perMinute: 80 }, 'https://internal.example': { perMinute: 600 } },
      },
    })
    browser = await launchChromium()
    // Each client on its own loopback address, reporting every 500 ms (within the 2/s per-client limit).
    const clients = FLEET.flatMap((group, g) => Array.from({ length: group.clients }, (_, i) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: `127.0.${10 + g}.${i + 1}` })
      agents.push(agent)
      return { group, id: `${g}-${i}`, agent, tick: 0 }
    }))
    const send = () => {
      for (const client of clients) {
        client.tick++
        const attempts = 2 + ((client.tick * 7 + client.id.length) % 5)
        const throttled = client.group.throttleEvery && client.tick % client.group.throttleEvery === 0 ? 1 : 0
        const body = JSON.stringify({ v: 1, scope: client.group.scope, clientId: client.id, attempts, throttled, backlog: client.tick % 4, seq: client.tick })
        const req = request({
          host: '127.0.0.1', port: server.port, path: '/v1/report', method: 'POST', agent: client.agent,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${client.group.token}`, 'content-length': Buffer.byteLength(body) },
        }, (res) => res.resume())
        req.on('error', () => {})
        req.end(body)
      }
    }
    send()
    timer = setInterval(send, 500)
  })

  afterAll(async () => {
    if (timer) clearInterval(timer)
    for (const agent of agents) agent.destroy()
    await browser?.close()
    await server?.close()
  })

  it('asks for the admin token when it has none', async () => {
    const page = await browser.newPage(`${server.url}/`)
    await page.locator('#login.shown').waitFor({ timeout: 10_000 })
    expect(await page.locator('#status').textContent()).toContain('admin token needed')
    expect(await page.locator('#rows tr').count()).toBe(0)
    await page.close()
    // Chromium logs the expected 401 itself; nothing else may have gone wrong.
    expect(browser.problems.every((problem) => problem.includes('401'))).toBe(true)
    browser.problems.length = 0
  })

  it('shows every scope live, with clients, rates and fair share, and keeps refreshing', async () => {
    const page = await browser.newPage(`${server.url}/#token=${ADMIN}`)
    // The token leaves the address bar (and the history) at once.
    expect(new URL(page.url()).hash).toBe('')
    for (const group of FLEET) {
      const row = page.locator(`#rows tr[data-scope="${group.scope}"]`)
      await row.waitFor({ timeout: 10_000 })
      await expect.poll(async () => row.locator('td.clients').textContent(), { timeout: 10_000 }).toBe(String(group.clients))
    }
    const api = page.locator('#rows tr[data-scope="https://api.example.com"]')
    // 80/min shared by 12 clients with backlogs: an idle client's share is at most 80/60/12 per second
    const share = Number(await api.locator('td.share').textContent())
    expect(share).toBeGreaterThan(0)
    expect(share).toBeLessThanOrEqual(80 / 60 / 12)
    const firstUpdate = await page.locator('#status').textContent()
    await expect.poll(async () => page.locator('#status').textContent(), { timeout: 10_000 }).not.toBe(firstUpdate)
    await expect.poll(async () => Number(await api.locator('td.attempts').textContent()), { timeout: 10_000 }).toBeGreaterThan(10)
    await expect.poll(async () => Number(await api.locator('td.throttled').textContent()), { timeout: 10_000 }).toBeGreaterThan(0)
    // Charts fill as the page keeps polling.
    await page.waitForTimeout(12_000)
    expect(await api.locator('polyline').count()).toBe(4)
    expect(browser.problems).toEqual([])
    await page.screenshot({ path: join(repo, 'docs/images/telemetry-dashboard.png'), fullPage: true })
    await page.close()
  }, 60_000)
})
