// The name a lane's scope is reported under. The protocol takes 1–256 visible ASCII
// characters, but lane scopes are not all like that: a route split off its origin is
// `origin#~route:POST /products` (a space), a `scope()` function may return any text, and a
// long path template can run past 256. Such a lane's every report used to be refused by the
// link's own validation, silently: the lane never took part in the fleet. A scope that is
// already wire-ready goes as it is (so `--quota` keys and dashboards keep their names);
// any other is made so the same way by every client, so the fleet still shares one name.
import { MAX_SCOPE_LENGTH } from './protocol.js'

const WIRE_READY = /^[\x21-\x7e]+$/
/** Characters kept from an over-long scope, before `~` and the 14-character hash of the whole. */
const KEPT_PREFIX = MAX_SCOPE_LENGTH - 15
const utf8 = new TextEncoder()

/** Percent-encodes each UTF-8 byte outside visible ASCII (`' '` → `%20`, `ë` → `%C3%AB`). */
function percentEncode(text: string): string {
  return text.replace(/[^\x21-\x7e]+/g, (run) => {
    let out = ''
    for (const byte of utf8.encode(run)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
    return out
  })
}

/** FNV-1a over UTF-16 code units, 32 bits, as 7 base-36 digits. */
function fnv1a(text: string, seed: number): string {
  let hash = seed
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0
  return hash.toString(36).padStart(7, '0')
}

/** The scope as reported: itself when it is 1–256 visible ASCII characters, else a stable wire-ready name. */
export function wireScope(scope: string): string {
  if (scope.length <= MAX_SCOPE_LENGTH && WIRE_READY.test(scope)) return scope
  // An empty scope has no byte to encode; it goes as the encoding of NUL, which no origin holds.
  const encoded = scope.length === 0 ? '%00' : percentEncode(scope)
  if (encoded.length <= MAX_SCOPE_LENGTH) return encoded
  // Two differently seeded hashes (56 bits in all): two long scopes sharing their first 241 characters stay apart.
  return `${encoded.slice(0, KEPT_PREFIX)}~${fnv1a(scope, 0x811c9dc5)}${fnv1a(scope, 0x050c5d1f)}`
}
