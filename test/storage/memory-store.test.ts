import { describe, expect, it } from 'vitest'
import { memoryStore } from '../../src/storage/memory-store.js'

describe('memoryStore', () => {
  it('stores copies and returns undefined for missing keys', async () => {
    const store = memoryStore()
    const state = { kind: 'atb', version: 1, savedAt: 5, rate: 2 }
    await store.set('k', state)
    state.rate = 99
    expect(await store.get('k')).toEqual({ kind: 'atb', version: 1, savedAt: 5, rate: 2 })
    expect(await store.get('missing')).toBeUndefined()
  })

  it('drops the least recently used keys beyond maxEntries', async () => {
    const store = memoryStore({ maxEntries: 2 })
    await store.set('a', 1)
    await store.set('b', 2)
    await store.get('a')
    await store.set('c', 3)
    expect(store.size).toBe(2)
    expect(await store.get('b')).toBeUndefined()
    expect(await store.get('a')).toBe(1)
  })
})
