import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { fetch as undiciFetch, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { atb, none } from '../../src/core/pacers/index.js'
import { fileStore, install, type Installed } from '../../src/node/index.js'
import { startScriptedServer, type ScriptedServer } from './scripted-server.js'

let installed: Installed | undefined
let server: ScriptedServer | undefined
afterEach(async () => {
  installed?.uninstall()
  await installed?.limiter.close()
  installed = undefined
  await server?.close()
  server = undefined
})

const throttleFirst = (n: number) => (count: number) =>
  count <= n ? { status: 429, body: 'slow down' } : { status: 200, body: `ok ${count}` }

describe('install()', () => {
  it('paces Node’s own global fetch (the bundled undici reads the same global dispatcher)', async () => {
    // The global fetch is Node's bundled undici, not this package's copy.
    expect(globalThis.fetch).not.toBe(undiciFetch)
    server = await startScriptedServer(throttleFirst(1))
    installed = install({ strategy: none() })
    const throttled: number[] = []
    installed.limiter.on('throttled', (event) => throttled.push(event.status))
    const res = await fetch(`${server.url}/global`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('ok 2')
    expect(server.received.map((r) => r.path)).toEqual(['/global', '/global'])
    expect(throttled).toEqual([429])
    expect(installed.limiter.stats()).toMatchObject([{ scope: server.url, attempts: 2, throttled: 1 }])
  })

  it('paces undici.request and undici.fetch without a dispatcher option', async () => {
    server = await startScriptedServer(throttleFirst(2))
    installed = install({ strategy: none() })
    const res = await request(`${server.url}/a`)
    expect(await res.body.text()).toBe('ok 3')
    const res2 = await undiciFetch(`${server.url}/b`)
    expect(await res2.text()).toBe('ok 4')
    expect(installed.limiter.stats()[0]).toMatchObject({ attempts: 4, throttled: 2 })
  })

  it('uninstall() puts the previous dispatcher back; the global fetch is no longer paced', async () => {
    const before = getGlobalDispatcher()
    server = await startScriptedServer(throttleFirst(1))
    installed = install({ strategy: none() })
    expect(getGlobalDispatcher()).toBe(installed.dispatcher)
    installed.uninstall()
    installed.uninstall()
    expect(getGlobalDispatcher()).toBe(before)
    const res = await fetch(`${server.url}/`)
    expect(res.status).toBe(429)
    await res.arrayBuffer()
    expect(installed.limiter.stats()).toEqual([])
  })

  it('puts a polite agent (not a composed Proxy) over the previous global dispatcher, which close() leaves open', async () => {
    const before = getGlobalDispatcher()
    server = await startScriptedServer(throttleFirst(1))
    const paced = install({ strategy: none() })
    expect(paced.dispatcher.dispatcher).toBe(before)
    expect(paced.dispatcher.dispatch).toBe(Object.getPrototypeOf(paced.dispatcher).dispatch)
    expect(await (await request(`${server.url}/a`)).body.text()).toBe('ok 2')
    await paced.close()
    expect(getGlobalDispatcher()).toBe(before)
    // The previous dispatcher still works, unpaced (the closed limiter saw nothing more).
    expect(await (await request(`${server.url}/b`)).body.text()).toBe('ok 3')
    expect(paced.limiter.stats()[0]).toMatchObject({ attempts: 2, throttled: 1 })
  })

  it('installed twice and closed first-in first-out: the original dispatcher comes back, not the closed first agent', async () => {
    // Two libraries of one process each call install(); the first to finish closes first.
    const before = getGlobalDispatcher()
    server = await startScriptedServer(() => ({ status: 200, body: 'ok' }))
    const first = install({ strategy: none() })
    const second = install({ strategy: none() })
    try {
      await first.close()
      await second.close()
      // Before: the global dispatcher was left as the first's closed agent (every request: ClientClosedError).
      expect(getGlobalDispatcher()).toBe(before)
      expect(await (await request(`${server.url}/after`)).body.text()).toBe('ok')
    } finally {
      if (getGlobalDispatcher() !== before) setGlobalDispatcher(before)
    }
  })

  it('installed twice and uninstalled last-in first-out: each uninstall() puts back what it replaced', async () => {
    const before = getGlobalDispatcher()
    const first = install({ strategy: none() })
    const second = install({ strategy: none() })
    try {
      second.uninstall()
      expect(getGlobalDispatcher()).toBe(first.dispatcher)
      first.uninstall()
      expect(getGlobalDispatcher()).toBe(before)
    } finally {
      if (getGlobalDispatcher() !== before) setGlobalDispatcher(before)
      await first.close()
      await second.close()
    }
  })

  it('works when the global fetch ran before polite-fetch/node was loaded (bundled undici 6 dispatcher)', async () => {
    server = await startScriptedServer(throttleFirst(2))
    const dir = await mkdtemp(join(tmpdir(), 'polite-install-'))
    const entry = resolve(import.meta.dirname, '../../src/node/index.ts')
    const pacers = resolve(import.meta.dirname, '../../src/core/pacers/index.ts')
    const script = join(dir, 'script.mts')
    await writeFile(
      script,
      `const url = ${JSON.stringify(server.url)}
       await (await fetch(url + '/before')).arrayBuffer() // creates Node's bundled global dispatcher (undici 6)
       const { install } = await import(${JSON.stringify(entry)})
       const { none } = await import(${JSON.stringify(pacers)})
       const paced = install({ strategy: none() })
       const res = await fetch(url + '/after')
       const text = await res.text()
       console.log(JSON.stringify({ status: res.status, text, stats: paced.limiter.stats()[0] }))
       paced.uninstall()
       await paced.limiter.close()`,
    )
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
        cwd: resolve(import.meta.dirname, '../..'),
        timeout: 15_000,
      })
      const result = JSON.parse(stdout.trim().split('\n').pop()!) as { status: number; text: string; stats: unknown }
      // /before took a 429 unpaced; /after was 429'd, retried through the limiter, and answered 200.
      expect(server.received.map((r) => r.path)).toEqual(['/before', '/after', '/after'])
      expect(result).toMatchObject({ status: 200, text: 'ok 3', stats: { attempts: 2, throttled: 1 } })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('with a fileStore, the next run (a cron job) resumes the learned rate instead of starting unpaced', async () => {
    server = await startScriptedServer((n) => (n === 6 ? { status: 429 } : { status: 200 }))
    const dir = await mkdtemp(join(tmpdir(), 'polite-cron-'))
    const path = join(dir, 'state.json')
    // A short measuring span so the learned rate is fast enough for a test (the test runs well within the
    // internal 60 s measuring window, so the span is the time since the lane began).
    const strategy = atb({ minSpanMs: 100 })
    try {
      const first = install({ strategy, store: fileStore(path) })
      for (let i = 0; i < 6; i++) await (await fetch(`${server.url}/`)).arrayBuffer()
      const learned = first.limiter.stats()[0]!.ratePerSecond
      expect(learned).toBeLessThan(Infinity)
      await first.close()

      installed = install({ strategy, store: fileStore(path) })
      await (await fetch(`${server.url}/`)).arrayBuffer()
      const [lane] = installed.limiter.stats()
      // No 429 in this run, yet the lane paces: its rate came from the file.
      expect(lane).toMatchObject({ throttled: 0, successes: 1 })
      expect(lane!.ratePerSecond).toBeLessThan(Infinity)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('install(): Node’s global fetch replays every body it sends', () => {
  const blob = new Blob([new Uint8Array([0, 1, 2, 254, 255])], { type: 'application/octet-stream' })
  const form = new FormData()
  form.set('field', 'välue')
  form.set('file', new Blob(['file body']), 'f.txt')
  const bodies: [string, () => BodyInit][] = [
    ['a JSON string', () => JSON.stringify({ input: 'héllo €' })],
    ['a Uint8Array', () => new Uint8Array([1, 2, 3, 0, 255])],
    ['a Buffer', () => Buffer.from('buffer body')],
    ['URLSearchParams', () => new URLSearchParams({ a: '1', b: 'two words' })],
    ['FormData', () => form],
    ['a Blob', () => blob],
    ['a ReadableStream', () => new Blob(['streamed ', 'body']).stream()],
  ]
  it.each(bodies)('%s: a 429, then the same bytes again', async (_name, body) => {
    server = await startScriptedServer(throttleFirst(1))
    installed = install({ strategy: none() })
    const init: RequestInit & { duplex?: string } = { method: 'POST', body: body(), duplex: 'half' }
    const res = await fetch(`${server.url}/upload`, init)
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    expect(server.receivedBytes).toHaveLength(2)
    expect(server.receivedBytes[1]!.equals(server.receivedBytes[0]!)).toBe(true)
    expect(server.receivedBytes[0]!.length).toBeGreaterThan(0)
  })
})
