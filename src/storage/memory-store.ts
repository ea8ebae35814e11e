// The default Store: a bounded in-memory map. Bounded because the limiter writes one
// key per scope it ever evicted, and the number of scopes is the caller's to choose;
// the least recently written or read keys go first.
import type { Store } from '../core/types.js'

export interface MemoryStoreOptions {
  /** Keys kept; the least recently used are dropped beyond it. @default 10_000 */
  maxEntries?: number
}

export interface MemoryStore extends Store {
  readonly size: number
  delete(key: string): Promise<void>
  clear(): Promise<void>
}

/** JSON round trip, so a stored state cannot be mutated through a reference the writer kept (as with a real store). */
function copy(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value))
}

export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxEntries = options.maxEntries ?? 10_000
  if (typeof maxEntries !== 'number' || !(maxEntries >= 1)) {
    throw new TypeError(`polite-fetch: option \`maxEntries\` must be a number >= 1; received ${String(maxEntries)}`)
  }
  const entries = new Map<string, unknown>()
  return {
    get size() {
      return entries.size
    },
    get(key) {
      if (!entries.has(key)) return Promise.resolve(undefined)
      const value = entries.get(key)
      entries.delete(key)
      entries.set(key, value)
      return Promise.resolve(copy(value))
    },
    set(key, value) {
      try {
        const stored = copy(value)
        entries.delete(key)
        entries.set(key, stored)
      } catch (error) {
        return Promise.reject(error)
      }
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value as string
        entries.delete(oldest)
      }
      return Promise.resolve()
    },
    delete(key) {
      entries.delete(key)
      return Promise.resolve()
    },
    clear() {
      entries.clear()
      return Promise.resolve()
    },
  }
}
