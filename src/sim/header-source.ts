// The smallest thing `readSignals` can read headers from: a pairs array rendered by
// `feedbackHeaders`. Building a WHATWG `Headers` per simulated attempt would cost more
// than the whole rest of the attempt; a scan over 0–5 pre-lowercased pairs costs nothing.
import type { HeaderSource } from '../core/signals/header-source.js'

export type { HeaderSource }

export class PairHeaders implements HeaderSource {
  private readonly names: string[]
  private readonly values: string[]

  constructor(pairs: ReadonlyArray<readonly [string, string]>) {
    this.names = pairs.map(([name]) => name.toLowerCase())
    this.values = pairs.map(([, value]) => value)
  }

  get(name: string): string | null {
    const names = this.names
    if (names.length === 0) return null
    const wanted = name.toLowerCase()
    let found: string | null = null
    for (let i = 0; i < names.length; i++) {
      if (names[i] !== wanted) continue
      // Repeated fields combine with ", " as Fetch's Headers.get does.
      found = found === null ? this.values[i]! : `${found}, ${this.values[i]!}`
    }
    return found
  }
}
