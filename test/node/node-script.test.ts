// The Node example at reduced size against the local status-only quota server
// (time-compressed): polite-fetch must waste far fewer attempts than p-retry.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runExample } from '../../examples/node-script/main.js'

/** A port free on 127.0.0.1 a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('examples/node-script', () => {
  it('sends at least 80% fewer 429s than p-retry on the same status-only quota', async () => {
    const result = await runExample(['--items', '250', '--time-scale', '40', '--quiet', '--json'])
    const polite = result!.runs.find((r) => r.name === 'polite-fetch')!
    const pRetry = result!.runs.find((r) => r.name === 'p-retry')!
    for (const run of [polite, pRetry]) {
      expect(run).toMatchObject({ items: 250, failed: 0 })
      // Every item needed one successful attempt; every other attempt was a 429.
      expect(run.attempts).toBe(run.items + run.throttled)
    }
    // The quota (100 burst + 80/min, ×40) is well below what 16 callers send: it must bind.
    expect(pRetry.throttled).toBeGreaterThan(50)
    expect(polite.throttled).toBeLessThanOrEqual(0.2 * pRetry.throttled)
  }, 60_000)

  it('--state with --port: a second run meets the same origin, so it finds the first run\'s lane in the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'node-script-state-'))
    const state = join(dir, 'state.json')
    try {
      const port = await freePort()
      const args = ['--mode', 'polite', '--items', '150', '--time-scale', '40', '--state', state, '--port', String(port), '--quiet', '--json']
      const keys = (): string[] => Object.keys(JSON.parse(readFileSync(state, 'utf8')) as object)
      await runExample(args)
      expect(keys()).toEqual([`polite-fetch:pacer:http://127.0.0.1:${port}`])
      await runExample(args)
      expect(keys()).toEqual([`polite-fetch:pacer:http://127.0.0.1:${port}`])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
