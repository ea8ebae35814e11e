// The Node example at reduced size against the local status-only quota server
// (time-compressed): polite-fetch must waste far fewer attempts than p-retry.
import { describe, expect, it } from 'vitest'
import { runExample } from '../../examples/node-script/main.js'

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
})
