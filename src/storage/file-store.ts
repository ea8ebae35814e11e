// A `Store` backed by one JSON file, so a Node process started every minute (a cron
// job, a CLI run, one of N workers) resumes the rate its lanes learned instead of
// probing the quota afresh. The one Node-only store: it alone may import node:fs.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Store } from '../core/types.js'

export interface FileStoreOptions {
  /**
   * Writes within this many ms are coalesced into one file write (default 50). The
   * limiter may save after every response; the file only needs the latest state.
   */
  coalesceMs?: number
}

export interface FileStore extends Store {
  /** Resolves once every `set` made so far is on disk (call before `process.exit`). */
  flush(): Promise<void>
  /** Path of the JSON file. */
  readonly path: string
}

type Entries = Record<string, unknown>

// Distinct temp names per process and per write: several processes may share the file.
let tempCounter = 0

/**
 * `fileStore(path)`: the file holds one JSON object, key → value. Reads load the file
 * once; writes are coalesced and atomic (temp file + rename), merged over what other
 * processes wrote to other keys meanwhile (last writer wins per key). A missing,
 * unreadable or corrupt file reads as empty and is replaced by the next write.
 */
export function fileStore(path: string, options: FileStoreOptions = {}): FileStore {
  const coalesceMs = Math.max(0, options.coalesceMs ?? 50)
  let loaded: Promise<Entries> | undefined
  // Keys set since the last write, and their values (undefined = delete).
  let dirty = new Map<string, unknown>()
  let timer: ReturnType<typeof setTimeout> | undefined
  // The write in progress (one at a time) and the promise every pending `set` waits on.
  let writing: Promise<void> = Promise.resolve()
  let pending: { promise: Promise<void>; resolve(): void; reject(error: unknown): void } | undefined

  function load(): Promise<Entries> {
    loaded ??= readEntries(path)
    return loaded
  }

  function schedule(): Promise<void> {
    if (!pending) {
      let resolve!: () => void
      let reject!: (error: unknown) => void
      const promise = new Promise<void>((res, rej) => {
        resolve = res
        reject = rej
      })
      pending = { promise, resolve, reject }
      timer = setTimeout(startWrite, coalesceMs)
    }
    return pending.promise
  }

  function startWrite(): void {
    timer = undefined
    const batch = pending
    const changes = dirty
    pending = undefined
    dirty = new Map()
    if (!batch) return
    writing = writing
      .catch(() => undefined)
      .then(() => writeMerged(path, changes))
      .then(batch.resolve, batch.reject)
  }

  return {
    path,
    async get(key) {
      const entries = await load()
      return entries[key]
    },
    set(key, value) {
      let copy: unknown
      try {
        // Serialise now so one unserialisable value fails its own `set`, not the file.
        const json = value === undefined ? undefined : JSON.stringify(value)
        copy = json === undefined ? undefined : JSON.parse(json)
      } catch (error) {
        return Promise.reject(error)
      }
      // Recorded synchronously so a `flush()` right after sees it; the cached view is
      // updated in load order, before any later `get` resolves.
      dirty.set(key, copy)
      void load().then((entries) => {
        if (copy === undefined) delete entries[key]
        else entries[key] = copy
      })
      return schedule()
    },
    async flush() {
      if (timer !== undefined) {
        clearTimeout(timer)
        startWrite()
      }
      await writing.catch(() => undefined)
    },
  }
}

async function readEntries(path: string): Promise<Entries> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return {}
  }
  try {
    const parsed: unknown = JSON.parse(text)
    return isEntries(parsed) ? parsed : {}
  } catch {
    return {}
  }
}

function isEntries(value: unknown): value is Entries {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

async function writeMerged(path: string, changes: Map<string, unknown>): Promise<void> {
  // Re-read so keys another process wrote since we loaded survive our write.
  const current = await readEntries(path)
  for (const [key, value] of changes) {
    if (value === undefined) delete current[key]
    else current[key] = value
  }
  await mkdir(dirname(path), { recursive: true })
  const temp = `${path}.${process.pid}.${++tempCounter}.tmp`
  try {
    await writeFile(temp, JSON.stringify(current), 'utf8')
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined)
    throw error
  }
}
