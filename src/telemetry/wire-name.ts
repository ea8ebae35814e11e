// The names a report carries, as the wire takes them. The protocol takes scopes of 1–256
// and client ids of 1–128 visible ASCII characters, but lanes and users do not all keep to
// that: a route split off its origin is `origin#~route:POST /products` (a space), a `scope()`
// function may return any text, a long path template can run past 256, and a client id may be
// `tab 1`. Each such report used to be refused by the link's own validation, silently: the
// lane (or the whole client) never took part in the fleet. A name that is already wire-ready
// goes as it is (so `--quota` keys and dashboards keep their names); any other is made so the
// same way by every client, so the fleet still shares one name.
import { MAX_CLIENT_ID_LENGTH, MAX_SCOPE_LENGTH } from './protocol.js'

const WIRE_READY = /^[\x21-\x7e]+$/
/** Length of `~` and the 14-character hash that end an over-long name. */
const HASH_SUFFIX_LENGTH = 15
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

/** `text` when it is 1–`maxLength` visible ASCII characters, else a stable wire-ready name of at most `maxLength`. */
export function wireName(text: string, maxLength: number): string {
  if (text.length <= maxLength && WIRE_READY.test(text)) return text
  // An empty name has no byte to encode; it goes as the encoding of NUL, which no origin holds.
  const encoded = text.length === 0 ? '%00' : percentEncode(text)
  if (encoded.length <= maxLength) return encoded
  // Two differently seeded hashes (56 bits in all): two long names sharing their first characters stay apart.
  return `${encoded.slice(0, maxLength - HASH_SUFFIX_LENGTH)}~${fnv1a(text, 0x811c9dc5)}${fnv1a(text, 0x050c5d1f)}`
}

/** The scope as reported: itself when it is 1–256 visible ASCII characters, else a stable wire-ready name. */
export const wireScope = (scope: string): string => wireName(scope, MAX_SCOPE_LENGTH)

/** The client id as reported: itself when it is 1–128 visible ASCII characters, else a stable wire-ready id. */
export const wireClientId = (clientId: string): string => wireName(clientId, MAX_CLIENT_ID_LENGTH)
