// The IndexedDB `Store`: the one home of idb-keyval (page and service worker alike).
// A worker that the browser stops, or a page that reloads, reads its pacer state back
// from here, so it resumes paced instead of bursting into a quota it had learned.
import { createStore, get, set, type UseStore } from 'idb-keyval'
import type { Store } from '../core/types.js'

export interface IdbStoreOptions {
  /** Object store inside the database (default `state`). */
  storeName?: string
  /**
   * Told about storage failures (no IndexedDB, quota exceeded, a value that cannot be
   * cloned). Persistence is best effort: a failed write must never fail a request.
   */
  onError?: (error: unknown) => void
}

/**
 * A `Store` backed by IndexedDB through idb-keyval. Values are structured-cloned, so
 * plain JSON (a `PacerState`) round-trips exactly, `Infinity` included.
 *
 * Never rejects: `get` resolves `undefined` and `set` resolves when IndexedDB is missing
 * or fails (private mode, storage pressure, Node), after telling `onError`.
 */
export function idbStore(dbName = 'polite-fetch', options: IdbStoreOptions = {}): Store {
  const storeName = options.storeName ?? 'state'
  const report = options.onError ?? (() => {})
  // Opened on first use, not at construction: createStore opens the database at once,
  // and a worker should not touch IndexedDB before it has anything to read or write.
  let useStore: UseStore | undefined
  const open = (): UseStore => {
    if (typeof indexedDB === 'undefined') throw new Error('IndexedDB is not available here')
    useStore ??= createStore(dbName, storeName)
    return useStore
  }

  return {
    async get(key: string): Promise<unknown> {
      try {
        return await get(key, open())
      } catch (error) {
        report(error)
        return undefined
      }
    },
    async set(key: string, value: unknown): Promise<void> {
      try {
        await set(key, value, open())
      } catch (error) {
        report(error)
      }
    },
  }
}
