import { afterEach, describe, expect, it, vi } from 'vitest'
import { renderDemo, run } from '../../src/cli/demo.js'
import type { LiveRow } from '../../src/sim/live/run-live-workload.js'

/** Runs the demo with stdout and stderr captured. */
async function demo(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk)
    return true
  })
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  const code = await run(argv)
  vi.restoreAllMocks()
  return { code, stdout, stderr }
}

describe('polite-fetch demo (npm start)', () => {
  afterEach(() => vi.restoreAllMocks())

  it('prints both strategies as JSON rows, polite-fetch with far fewer 429s on the same overloaded quota', async () => {
    // The real workload shape at reduced size: 10 clients, 800 requests in 5 model minutes
    // (1.6x what the quota admits), time compressed x100: about 6 s of wall time.
    const { code, stdout } = await demo(['--json', '--clients', '10', '--requests', '800', '--time-scale', '100'])
    expect(code).toBe(0)
    const { rows } = JSON.parse(stdout) as { rows: Record<string, unknown>[] }
    expect(rows.map((row) => row.strategy)).toEqual(['exponential', 'polite-fetch'])
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(['attempts', 'clients', 'completionMs', 'feedback', 'requests', 'strategy', 'throttled'])
      expect(row).toMatchObject({ feedback: 'status-only', clients: 10, requests: 800 })
      // Unlimited retries: every request ends in one success, so each other attempt was a 429.
      expect(row.attempts).toBe(800 + (row.throttled as number))
      expect(row.completionMs).toBeGreaterThan(0)
    }
    const [baseline, polite] = rows as [{ throttled: number }, { throttled: number }]
    expect(baseline.throttled).toBeGreaterThan(100)
    expect(polite.throttled).toBeLessThan(baseline.throttled * 0.2)
  }, 60_000)

  it('shows progress per strategy on stderr while it runs, then the table on stdout', async () => {
    // stderr is not a terminal under the test runner: a line per strategy at each quarter.
    const { code, stdout, stderr } = await demo(['--clients', '2', '--requests', '40', '--time-scale', '200'])
    expect(code).toBe(0)
    for (const name of ['exponential', 'polite-fetch']) {
      for (const percent of [25, 50, 75, 100]) expect(stderr).toContain(`${name}: ${percent}% (`)
    }
    expect(stdout).toContain('fewer 429s than exponential backoff')
  }, 30_000)

  it('rejects a bad feedback mode or a non-positive number with exit code 1 and a message', async () => {
    const feedback = await demo(['--feedback', 'smoke-signals'])
    expect(feedback.code).toBe(1)
    expect(feedback.stderr).toContain('--feedback must be one of')
    const clients = await demo(['--clients', '0'])
    expect(clients.code).toBe(1)
    expect(clients.stderr).toContain('--clients must be a positive number')
    const scale = await demo(['--time-scale', 'fast'])
    expect(scale.code).toBe(1)
    expect(scale.stderr).toContain('--time-scale must be a positive number')
  })

  it('prints its usage for --help', async () => {
    const { code, stdout } = await demo(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^usage: polite-fetch demo/)
  })
})

describe('renderDemo', () => {
  const row = (strategy: string, throttled: number, completionMs: number): LiveRow => ({
    strategy,
    feedback: 'status-only',
    clients: 20,
    requests: 800,
    attempts: 800 + throttled,
    throttled,
    completionMs,
    seed: 1,
    wallMs: 1,
    completed: 800,
  })

  it('states the reduction in 429s and the change in completion time against the baseline', () => {
    const text = renderDemo([row('exponential', 1_000, 500_000), row('polite-fetch', 80, 550_000)])
    expect(text).toContain('polite-fetch: 92.0% fewer 429s than exponential backoff, completion +10.0%.')
    expect(text.split('\n')[0]).toMatch(/^strategy\s+feedback\s+clients\s+requests\s+attempts\s+429s/)
  })

  it('says 0% fewer when the baseline met no 429 at all (no division by zero)', () => {
    const text = renderDemo([row('exponential', 0, 300_000), row('polite-fetch', 0, 297_000)])
    expect(text).toContain('0.0% fewer 429s than exponential backoff, completion -1.0%.')
  })
})
