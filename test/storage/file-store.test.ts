import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fileStore } from '../../src/storage/file-store.js'

let dir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'polite-file-store-'))
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('fileStore', () => {
  it('round-trips values through the file, so a new process resumes them', async () => {
    const path = join(dir, 'state.json')
    const first = fileStore(path, { coalesceMs: 0 })
    await first.set('lane:https://api.example.com', { kind: 'atb', version: 1, savedAt: 5, rate: 2.5 })
    await first.set('other', [1, 2, 3])

    const second = fileStore(path)
    expect(await second.get('lane:https://api.example.com')).toEqual({ kind: 'atb', version: 1, savedAt: 5, rate: 2.5 })
    expect(await second.get('other')).toEqual([1, 2, 3])
    expect(await second.get('missing')).toBeUndefined()
  })

  it('reads a missing file as empty and creates parent folders on write', async () => {
    const path = join(dir, 'nested', 'deeper', 'state.json')
    const store = fileStore(path, { coalesceMs: 0 })
    expect(await store.get('x')).toBeUndefined()
    await store.set('x', 1)
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ x: 1 })
  })

  it.each([
    ['truncated JSON', '{"x": 1'],
    ['an array', '[1,2]'],
    ['a number', '42'],
    ['empty', ''],
  ])('treats a corrupt file (%s) as empty and replaces it on the next write', async (_name, content) => {
    const path = join(dir, 'state.json')
    await writeFile(path, content)
    const store = fileStore(path, { coalesceMs: 0 })
    expect(await store.get('x')).toBeUndefined()
    await store.set('y', 'ok')
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ y: 'ok' })
  })

  it('coalesces a burst of sets into one write and leaves no temp files', async () => {
    const path = join(dir, 'state.json')
    const store = fileStore(path, { coalesceMs: 20 })
    const writes = Array.from({ length: 50 }, (_, i) => store.set('counter', i))
    await Promise.all(writes)
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ counter: 49 })
    expect(await readdir(dir)).toEqual(['state.json'])
  })

  it('keeps keys written by another process (merge per key, last writer wins)', async () => {
    const path = join(dir, 'state.json')
    const a = fileStore(path, { coalesceMs: 0 })
    const b = fileStore(path, { coalesceMs: 0 })
    expect(await a.get('a')).toBeUndefined()
    expect(await b.get('b')).toBeUndefined()
    await a.set('a', 1)
    await b.set('b', 2)
    await a.set('shared', 'from-a')
    await b.set('shared', 'from-b')
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ a: 1, b: 2, shared: 'from-b' })
  })

  it('deletes a key set to undefined', async () => {
    const path = join(dir, 'state.json')
    const store = fileStore(path, { coalesceMs: 0 })
    await store.set('gone', 1)
    await store.set('gone', undefined)
    expect(await store.get('gone')).toBeUndefined()
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({})
  })

  it('rejects an unserialisable value without corrupting the file', async () => {
    const path = join(dir, 'state.json')
    const store = fileStore(path, { coalesceMs: 0 })
    await store.set('good', { n: 1 })
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    await expect(store.set('bad', cyclic)).rejects.toThrow(TypeError)
    await expect(store.set('big', 1n)).rejects.toThrow(TypeError)
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ good: { n: 1 } })
  })

  it('stores a copy: later mutation of the caller object does not leak in', async () => {
    const path = join(dir, 'state.json')
    const store = fileStore(path, { coalesceMs: 0 })
    const value = { n: 1 }
    await store.set('v', value)
    value.n = 2
    expect(await store.get('v')).toEqual({ n: 1 })
  })

  it('flush() writes pending sets at once', async () => {
    const path = join(dir, 'state.json')
    const store = fileStore(path, { coalesceMs: 60_000 })
    void store.set('late', true)
    await store.flush()
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ late: true })
  })

  it('a failed write rejects its sets and the store keeps working', async () => {
    // The path is a directory: rename onto it fails.
    const store = fileStore(dir, { coalesceMs: 0 })
    await expect(store.set('x', 1)).rejects.toThrow()
    await expect(store.flush()).resolves.toBeUndefined()
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([])
  })
})
