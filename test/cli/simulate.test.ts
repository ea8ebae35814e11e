import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { run } from '../../src/cli/simulate.js'

const root = resolve(import.meta.dirname, '../..')
const small = ['--seeds', '2', '--scenario', 'synthetic-5c-300', '--strategy', 'atb', '--server', 'token-bucket-stepped', '--feedback', 'status-only']

describe('polite-fetch simulate', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'simulate-'))
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await rm(dir, { recursive: true, force: true })
  })

  it('writes JSON rows, the markdown report and SVG charts', async () => {
    const json = join(dir, 'grid.json')
    const markdown = join(dir, 'docs', 'results.md')
    const svg = join(dir, 'charts')
    const code = await run([...small, '--workers', '1', '--json', json, '--markdown', markdown, '--svg', svg])
    expect(code).toBe(0)
    const parsed = JSON.parse(await readFile(json, 'utf8'))
    expect(parsed.grid).toMatchObject({ seeds: 2, strategies: ['exponential', 'atb'], servers: ['token-bucket-stepped'] })
    expect(parsed.rows.map((r: { strategy: string }) => r.strategy)).toEqual(['exponential', 'atb'])
    const text = await readFile(markdown, 'utf8')
    expect(text).toContain('# Simulator results')
    expect(text).toContain('](../charts/scatter-synthetic-5c-300-token-bucket-stepped-status-only.svg)')
    const charts = (await readdir(svg)).sort()
    expect(charts).toEqual([
      'scatter-synthetic-5c-300-token-bucket-stepped-status-only.svg',
      'timeline-synthetic-5c-300-token-bucket-stepped-status-only-atb.svg',
      'timeline-synthetic-5c-300-token-bucket-stepped-status-only-exponential.svg',
    ])
  })

  it('prints a table when no output file is named', async () => {
    let printed = ''
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { printed += String(chunk); return true })
    expect(await run([...small, '--workers', '1'])).toBe(0)
    out.mockRestore()
    expect(printed.split('\n')[0]).toMatch(/^scenario\s+k\s+server\s+feedback/)
    expect(printed).toContain('synthetic-5c-300  1  token-bucket-stepped  status-only  paper   atb')
  })

  it('runs every cell at each --scale, and every row carries its scale', async () => {
    const json = join(dir, 'scaled.json')
    expect(await run([...small, '--workers', '1', '--scale', '0.1,10', '--json', json])).toBe(0)
    const parsed = JSON.parse(await readFile(json, 'utf8'))
    expect(parsed.grid.scales).toEqual([0.1, 10])
    const rows = parsed.rows as Array<{ scale: number; strategy: string; oracleCompletionMsMean: number; incompleteRuns: number }>
    expect(rows.map((r) => [r.scale, r.strategy])).toEqual([[0.1, 'exponential'], [0.1, 'atb'], [10, 'exponential'], [10, 'atb']])
    // Same arrivals, stretched: the oracle's completion grows by the ratio of the scales.
    expect(rows[2]!.oracleCompletionMsMean / rows[0]!.oracleCompletionMsMean).toBeCloseTo(100, 0)
    expect(await run([...small, '--scale', '0'])).toBe(1)
    expect(await run([...small, '--scale', 'fast'])).toBe(1)
  })

  it('prints the scale verdict after a multi-scale grid, and beside an earlier run with --compare', async () => {
    const stderr = process.stderr.write as unknown as { mock: { calls: unknown[][] } }
    const grid = [...small, '--workers', '1', '--scale', '1,10']
    const earlier = join(dir, 'earlier.json')
    let from = stderr.mock.calls.length
    expect(await run([...grid, '--json', earlier])).toBe(0)
    let said = stderr.mock.calls.slice(from).map((c) => String(c[0])).join('')
    expect(said).toMatch(/atb: \d of 2 cells pass, \d scale-free breaks/)
    expect(said).toMatch(/token-bucket-stepped status-only paper\s+k=1 \d\/1 {2}k=10 \d\/1/)
    expect(said).toContain('(no aws-adaptive rows')
    // The same grid against itself: the counts stand alone and no cell changed verdict.
    from = stderr.mock.calls.length
    expect(await run([...grid, '--json', join(dir, 'again.json'), '--compare', earlier])).toBe(0)
    said = stderr.mock.calls.slice(from).map((c) => String(c[0])).join('')
    expect(said).toMatch(/atb: \d of 2 cells pass/)
    expect(said).not.toContain('→')
    expect(said).not.toMatch(/now (passes|misses)/)
  })

  it('runs the routes scenario with --routes, judged, and writes its rows', async () => {
    let printed = ''
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { printed += String(chunk); return true })
    const json = join(dir, 'routes.json')
    expect(await run(['--routes', '--seeds', '1', '--scale', '1', '--json', json])).toBe(0)
    out.mockRestore()
    expect(printed.split('\n')[0]).toMatch(/^strategy\s+splitting\s+feedback\s+k\s+429s/)
    const parsed = JSON.parse(await readFile(json, 'utf8'))
    expect(parsed.rows.map((r: { strategy: string; learnRouteSplits: boolean }) => `${r.strategy}/${r.learnRouteSplits}`)).toEqual(['exponential/true', 'atb/true', 'atb/false'])
    expect(Object.keys(parsed.rows[1].routes)).toEqual(['POST /orders', 'GET /catalog'])
    expect(await run(['--routes', '--strategy', 'aatb'])).toBe(1)
    expect(await run(['--routes', '--scale', '-1'])).toBe(1)
  }, 60_000)

  it('rejects unknown names and flags, in grid and live mode', async () => {
    expect(await run(['--scenario', 'nope'])).toBe(1)
    expect(await run(['--strategy', 'magic'])).toBe(1)
    expect(await run(['--grid', 'huge'])).toBe(1)
    expect(await run(['--seeds', '0'])).toBe(1)
    expect(await run(['--bogus'])).toBe(1)
    expect(await run(['--live', '--scenario', 'nope'])).toBe(1)
    expect(await run(['--live', '--feedback', 'smoke-signals'])).toBe(1)
    expect(await run(['--live', '--time-scale', '0'])).toBe(1)
    expect(await run(['--live', '--strategy', 'magic'])).toBe(1)
  })

  it('runs through the bin with worker threads and writes the same bytes as in-process', async () => {
    const viaBin = join(dir, 'bin.json')
    const inProcess = join(dir, 'in-process.json')
    await promisify(execFile)(process.execPath, [join(root, 'bin/polite-fetch.js'), 'simulate', ...small, '--workers', '2', '--json', viaBin], { cwd: root })
    expect(await run([...small, '--workers', '1', '--json', inProcess])).toBe(0)
    expect(await readFile(viaBin, 'utf8')).toBe(await readFile(inProcess, 'utf8'))
  }, 60_000)
})
