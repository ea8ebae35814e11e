import 'fake-indexeddb/auto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { idbStore } from '../../src/storage/idb-store.js'

let dbCounter = 0
const freshName = () => `polite-fetch-test-${++dbCounter}`

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('idbStore', () => {
  it('round-trips a pacer state, Infinity and nesting included', async () => {
    const store = idbStore(freshName())
    const state = { kind: 'atb', version: 1, savedAt: 1_700_000_000_000, ratePerSecond: 1.5, capPerSecond: Infinity, gates: { until: 5 } }
    await store.set('pacer:https://api.example', state)
    expect(await store.get('pacer:https://api.example')).toEqual(state)
  })

  it('answers undefined for a key never written', async () => {
    expect(await idbStore(freshName()).get('nothing')).toBeUndefined()
  })

  it('is read back by a second store on the same database (a restarted worker)', async () => {
    const name = freshName()
    await idbStore(name).set('k', { rate: 2 })
    expect(await idbStore(name).get('k')).toEqual({ rate: 2 })
  })

  it('keeps databases apart by name', async () => {
    const a = freshName()
    const b = freshName()
    await idbStore(a).set('k', 1)
    expect(await idbStore(b).get('k')).toBeUndefined()
  })

  it('resolves instead of throwing when IndexedDB is missing, and says why', async () => {
    vi.stubGlobal('indexedDB', undefined)
    const errors: unknown[] = []
    const store = idbStore(freshName(), { onError: (e) => errors.push(e) })
    await expect(store.set('k', 1)).resolves.toBeUndefined()
    await expect(store.get('k')).resolves.toBeUndefined()
    expect(errors).toHaveLength(2)
  })

  it('swallows a value IndexedDB cannot clone, reporting it', async () => {
    const errors: unknown[] = []
    const store = idbStore(freshName(), { onError: (e) => errors.push(e) })
    await expect(store.set('k', { f: () => 1 })).resolves.toBeUndefined()
    expect(errors).toHaveLength(1)
    expect(await store.get('k')).toBeUndefined()
  })
})
