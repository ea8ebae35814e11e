// The origin of an absolute http(s) URL string without parsing the whole URL on
// every call. Profiling client.fetch against a real loopback server showed `new URL`
// as the largest single cost of the client (~4 µs per request in situ, more than the
// limiter itself), yet the hot path only needs the origin: the lane key. The origin
// depends only on the scheme and the authority, and the WHATWG parser ends the
// authority of a special URL at the first '/', '?', '#' or '\', so `scheme://authority`
// is a sound cache key: whatever follows it cannot change the origin, nor make a URL
// that failed to parse parse (path, query and fragment states have no failures).
// Anything unusual (no "//", upper-case scheme, leading spaces, empty authority:
// "http:///host" skips slashes) is left to the full parser by the caller.

/** Distinct authorities remembered; past this the cache starts over (a client talks to few hosts). */
export const MAX_CACHED_ORIGINS = 256

/** Where the authority of an `http://` or `https://` string starts, or -1 for any other string. */
function authorityStart(href: string): number {
  // 'h' 't' 't' 'p' then ':' or 's:' then '//'.
  if (href.charCodeAt(0) !== 104 || href.charCodeAt(1) !== 116 || href.charCodeAt(2) !== 116 || href.charCodeAt(3) !== 112) {
    return -1
  }
  let at = 4
  if (href.charCodeAt(at) === 115) at++
  if (href.charCodeAt(at) !== 58 || href.charCodeAt(at + 1) !== 47 || href.charCodeAt(at + 2) !== 47) return -1
  return at + 3
}

function endsAuthority(c: number): boolean {
  return c === 47 || c === 63 || c === 35 || c === 92 // / ? # \
}

function authorityEnd(href: string, from: number): number {
  for (let i = from; i < href.length; i++) if (endsAuthority(href.charCodeAt(i))) return i
  return href.length
}

export class OriginCache {
  readonly #origins = new Map<string, string | null>()
  /** The last `scheme://authority` looked up and its origin: most calls repeat it, and a prefix compare beats hashing a slice. */
  #lastKey = ''
  #lastOrigin: string | null = null

  /**
   * The origin of `href` when it is an absolute `http:`/`https:` URL of the plain shape;
   * `null` when such a URL does not parse (fetch will reject it); `undefined` when the
   * caller must parse it in full (relative, other scheme, unusual spelling).
   */
  originOf(href: string): string | null | undefined {
    const start = authorityStart(href)
    if (start < 0) return undefined
    const last = this.#lastKey
    if (
      last.length > start &&
      href.startsWith(last) &&
      (href.length === last.length || endsAuthority(href.charCodeAt(last.length)))
    ) {
      return this.#lastOrigin
    }
    const end = authorityEnd(href, start)
    if (end === start) return undefined
    const key = end === href.length ? href : href.slice(0, end)
    let origin = this.#origins.get(key)
    if (origin === undefined) {
      try {
        origin = new URL(key).origin
      } catch {
        origin = null
      }
      if (this.#origins.size >= MAX_CACHED_ORIGINS) this.#origins.clear()
      this.#origins.set(key, origin)
    }
    this.#lastKey = key
    this.#lastOrigin = origin
    return origin
  }
}
