// A small RFC 8941 Structured Field parser: Lists and Dictionaries, enough for the
// IETF RateLimit fields. Bare items: integers, decimals, strings, tokens, booleans;
// byte sequences are validated and skipped (their value is null: `pk` is a
// partition key we have no use for). Any syntax error fails the whole field
// (undefined), as RFC 8941 §4.2 requires; the caller then ignores the field.
// The RFC 9651 additions (Dates, Display Strings) count as errors.

/** A parsed bare item. Strings and tokens both become strings; null = a skipped byte sequence. */
export type SfBareItem = number | string | boolean | null
export type SfParams = Map<string, SfBareItem>
export interface SfItem {
  value: SfBareItem
  params: SfParams
}
export interface SfInnerList {
  items: SfItem[]
  params: SfParams
}
export type SfMember = SfItem | SfInnerList

export function isInnerList(member: SfMember): member is SfInnerList {
  return 'items' in member
}

/** RFC 8941 §4.2.1; undefined when malformed. */
export function parseSfList(text: string): SfMember[] | undefined {
  const members: SfMember[] = []
  return parseMembers(text, false, (member) => members.push(member)) ? members : undefined
}

/** RFC 8941 §4.2.2; undefined when malformed. Duplicate keys: the last wins. */
export function parseSfDictionary(text: string): Map<string, SfMember> | undefined {
  const members = new Map<string, SfMember>()
  return parseMembers(text, true, (member, key) => members.set(key, member)) ? members : undefined
}

// Sticky patterns, matched at the reader's position (only ever one parse at a time: no reentrancy).
const SPACES = / */y
const OWS = /[ \t]*/y
/** §4.2.3.3: lcalpha or "*", then lcalpha, DIGIT, "_", "-", ".", "*". */
const KEY = /[a-z*][a-z0-9_\-.*]*/y
/**
 * §4.2.3.1, one alternative per type, told apart by the first character as the RFC's algorithm
 * does: an Integer (at most 15 digits) or Decimal (12 + 3), a String (printable ASCII; a
 * backslash escapes only `"` and `\`), a Byte Sequence (base64 between colons, skipped), a
 * Boolean (?0 or ?1), a Token (tchar plus ":" and "/"). A longer number than the pattern takes
 * leaves a digit or "." behind, which no caller accepts after an item, so it fails the field.
 */
const BARE_ITEM = /(-?(?:\d{1,12}\.\d{1,3}|\d{1,15}))|"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"|(:[A-Za-z0-9+/=]*:)|\?([01])|([A-Za-z*][\w!#$%&'*+\-.^`|~:/]*)/y

/** Reads a List or (keyed) a Dictionary left to right, handing each member to `add`; false on a syntax error. */
function parseMembers(text: string, keyed: boolean, add: (member: SfMember, key: string) => void): boolean {
  let at = 0
  const take = (pattern: RegExp): string[] | undefined => {
    pattern.lastIndex = at
    const found = pattern.exec(text)
    if (found === null) return undefined
    at = pattern.lastIndex
    return found
  }
  const key = (): string | undefined => take(KEY)?.[0]
  const bareItem = (): SfBareItem | undefined => {
    const found = take(BARE_ITEM)
    if (found === undefined) return undefined
    const [, number, string, bytes, boolean, token] = found
    if (number !== undefined) return Number(number)
    if (string !== undefined) return string.replace(/\\(.)/g, '$1')
    if (bytes !== undefined) return null
    return boolean === undefined ? token : boolean === '1'
  }
  const params = (): SfParams | undefined => {
    const found: SfParams = new Map()
    while (text[at] === ';') {
      at++
      take(SPACES)
      const name = key()
      if (name === undefined) return undefined
      let value: SfBareItem | undefined = true
      if (text[at] === '=') {
        at++
        value = bareItem()
        if (value === undefined) return undefined
      }
      found.set(name, value)
    }
    return found
  }
  const item = (): SfItem | undefined => {
    const value = bareItem()
    const itemParams = value === undefined ? undefined : params()
    return itemParams === undefined ? undefined : { value: value as SfBareItem, params: itemParams }
  }
  const itemOrInnerList = (): SfMember | undefined => {
    if (text[at] !== '(') return item()
    at++
    const items: SfItem[] = []
    for (;;) {
      take(SPACES)
      if (text[at] === ')') {
        at++
        const listParams = params()
        return listParams === undefined ? undefined : { items, params: listParams }
      }
      const next = item() // also fails at the end of the text: an unclosed inner list
      if (next === undefined) return undefined
      items.push(next)
      if (text[at] !== ' ' && text[at] !== ')') return undefined
    }
  }

  take(SPACES)
  while (at < text.length) {
    let name = ''
    let member: SfMember | undefined
    if (!keyed) member = itemOrInnerList()
    else {
      const found = key()
      if (found === undefined) return false
      name = found
      if (text[at] === '=') {
        at++
        member = itemOrInnerList()
      } else {
        const memberParams = params()
        member = memberParams === undefined ? undefined : { value: true, params: memberParams }
      }
    }
    if (member === undefined) return false
    add(member, name)
    // After a member: OWS, then the end, or "," OWS and another member. A trailing comma is an error.
    take(OWS)
    if (at >= text.length) return true
    if (text[at] !== ',') return false
    at++
    take(OWS)
    if (at >= text.length) return false
  }
  return true
}
