import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseQuotaServerArgs } from '../../src/sim/quota-server-main.js'

describe('parseQuotaServerArgs', () => {
  it('reads every flag, in both --flag value and --flag=value forms', () => {
    expect(
      parseQuotaServerArgs([
        '--port', '8080', '--host=127.0.0.1', '--feedback', 'ratelimit', '--capacity', '50', '--per-minute=40',
        '--refill', 'stepped', '--step-ms', '30000', '--time-scale', '10', '--kind', 'token-bucket-stepped',
        '--endpoint', 'POST /products 2', '--endpoint=GET /search/* 1 5',
      ]),
    ).toEqual({
      port: 8080,
      host: '127.0.0.1',
      feedback: 'ratelimit',
      refill: 'stepped',
      timeScale: 10,
      kind: 'token-bucket-stepped',
      quota: { capacity: 50, perMinute: 40, stepIntervalMs: 30_000 },
      endpoints: [
        { method: 'POST', path: '/products', perSecond: 2 },
        { method: 'GET', path: '/search/*', perSecond: 1, capacity: 5 },
      ],
    })
    expect(parseQuotaServerArgs([])).toEqual({})
  })

  it('refuses what it cannot honour, saying which flag', () => {
    expect(() => parseQuotaServerArgs(['--feedback', 'loud'])).toThrow(/--feedback/)
    expect(() => parseQuotaServerArgs(['--capacity', '-1'])).toThrow(/--capacity/)
    expect(() => parseQuotaServerArgs(['--refill', 'sometimes'])).toThrow(/--refill/)
    expect(() => parseQuotaServerArgs(['--kind', 'magic'])).toThrow(/--kind/)
    expect(() => parseQuotaServerArgs(['--port', '70000'])).toThrow(/--port/)
    expect(() => parseQuotaServerArgs(['--endpoint', 'POST'])).toThrow(/--endpoint/)
    expect(() => parseQuotaServerArgs(['--time-scale'])).toThrow(/needs a value/)
    expect(() => parseQuotaServerArgs(['--verbose'])).toThrow(/unknown flag/)
  })
})

describe('quota-server-main as a separate process', () => {
  it('prints its URL first and serves the configured quota until SIGTERM', async () => {
    const entry = fileURLToPath(new URL('../../src/sim/quota-server-main.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', entry, '--capacity', '2', '--per-minute', '1', '--feedback', 'retry-after'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      let out = ''
      child.stdout.setEncoding('utf8')
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL within 15 s: ${out}`)), 15_000)
        child.stdout.on('data', (chunk: string) => {
          out += chunk
          const newline = out.indexOf('\n')
          if (newline !== -1) {
            clearTimeout(timer)
            resolve(out.slice(0, newline))
          }
        })
        child.once('exit', (code) => reject(new Error(`exited with ${code} before printing a URL`)))
      })
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const codes: number[] = []
      let retryAfter: string | null = null
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${url}/compute`)
        await response.arrayBuffer()
        codes.push(response.status)
        retryAfter = response.headers.get('retry-after')
      }
      expect(codes).toEqual([200, 200, 429])
      expect(Number(retryAfter)).toBeGreaterThan(0)
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const [code] = await exited
      expect(code).toBe(0)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  })
})
