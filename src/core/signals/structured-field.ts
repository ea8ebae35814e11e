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
  const cursor = new Cursor(text)
  const members: SfMember[] = []
  cursor.skipSpaces()
  while (!cursor.done()) {
    const member = cursor.itemOrInnerList()
    if (member === undefined) return undefined
    members.push(member)
    const next = cursor.nextMember()
    if (next !== 'more') return next === 'end' ? members : undefined
  }
  return members
}

/** RFC 8941 §4.2.2; undefined when malformed. Duplicate keys: the last wins. */
export function parseSfDictionary(text: string): Map<string, SfMember> | undefined {
  const cursor = new Cursor(text)
  const members = new Map<string, SfMember>()
  cursor.skipSpaces()
  while (!cursor.done()) {
    const key = cursor.key()
    if (key === undefined) return undefined
    let member: SfMember | undefined
    if (cursor.peek() === 61 /* = */) {
      cursor.at++
      member = cursor.itemOrInnerList()
    } else {
      const params = cursor.params()
      member = params === undefined ? undefined : { value: true, params }
    }
    if (member === undefined) return undefined
    members.set(key, member)
    const next = cursor.nextMember()
    if (next !== 'more') return next === 'end' ? members : undefined
  }
  return members
}

/** Reads one field value left to right; every method returns undefined on a syntax error. */
class Cursor {
  at = 0
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length
  }

  peek(): number {
    return this.text.charCodeAt(this.at)
  }

  skipSpaces(): void {
    while (this.peek() === 32) this.at++
  }

  private skipOws(): void {
    let code = this.peek()
    while (code === 32 || code === 9) code = this.text.charCodeAt(++this.at)
  }

  /** After a member: OWS, then the end, or "," OWS and another member. A trailing comma is an error. */
  nextMember(): 'end' | 'more' | 'error' {
    this.skipOws()
    if (this.done()) return 'end'
    if (this.peek() !== 44 /* , */) return 'error'
    this.at++
    this.skipOws()
    return this.done() ? 'error' : 'more'
  }

  itemOrInnerList(): SfMember | undefined {
    return this.peek() === 40 /* ( */ ? this.innerList() : this.item()
  }

  private innerList(): SfInnerList | undefined {
    this.at++
    const items: SfItem[] = []
    for (;;) {
      this.skipSpaces()
      if (this.done()) return undefined
      if (this.peek() === 41 /* ) */) {
        this.at++
        const params = this.params()
        return params === undefined ? undefined : { items, params }
      }
      const item = this.item()
      if (item === undefined) return undefined
      items.push(item)
      const next = this.peek()
      if (next !== 32 && next !== 41) return undefined
    }
  }

  private item(): SfItem | undefined {
    const value = this.bareItem()
    if (value === undefined) return undefined
    const params = this.params()
    return params === undefined ? undefined : { value, params }
  }

  params(): SfParams | undefined {
    const params: SfParams = new Map()
    while (this.peek() === 59 /* ; */) {
      this.at++
      this.skipSpaces()
      const key = this.key()
      if (key === undefined) return undefined
      let value: SfBareItem | undefined = true
      if (this.peek() === 61 /* = */) {
        this.at++
        value = this.bareItem()
        if (value === undefined) return undefined
      }
      params.set(key, value)
    }
    return params
  }

  key(): string | undefined {
    const start = this.at
    const first = this.peek()
    if (!(isLcAlpha(first) || first === 42 /* * */)) return undefined
    this.at++
    for (;;) {
      const code = this.peek()
      if (isLcAlpha(code) || isDigit(code) || code === 95 || code === 45 || code === 46 || code === 42) this.at++
      else break
    }
    return this.text.slice(start, this.at)
  }

  private bareItem(): SfBareItem | undefined {
    const code = this.peek()
    if (code === 45 /* - */ || isDigit(code)) return this.number()
    if (code === 34 /* " */) return this.string()
    if (code === 58 /* : */) return this.byteSequence()
    if (code === 63 /* ? */) return this.boolean()
    if (isAlpha(code) || code === 42 /* * */) return this.token()
    return undefined
  }

  /** §4.2.4: at most 15 integer digits; decimals at most 12 + 3. */
  private number(): number | undefined {
    const start = this.at
    if (this.peek() === 45) this.at++
    const digitsStart = this.at
    if (!isDigit(this.peek())) return undefined
    let dot = -1
    for (;;) {
      const code = this.peek()
      if (isDigit(code)) this.at++
      else if (code === 46 && dot === -1) {
        if (this.at - digitsStart > 12) return undefined
        dot = this.at++
      } else break
      if (this.at - digitsStart > (dot === -1 ? 15 : 16)) return undefined
    }
    if (this.at === digitsStart) return undefined
    if (dot !== -1) {
      const fraction = this.at - dot - 1
      if (fraction < 1 || fraction > 3) return undefined
    }
    return Number(this.text.slice(start, this.at))
  }

  /** §4.2.5: printable ASCII; backslash escapes only `"` and `\`. */
  private string(): string | undefined {
    this.at++
    let value = ''
    let chunkStart = this.at
    for (;;) {
      if (this.done()) return undefined
      const code = this.peek()
      if (code === 34) {
        value += this.text.slice(chunkStart, this.at++)
        return value
      }
      if (code === 92 /* \ */) {
        value += this.text.slice(chunkStart, this.at)
        const escaped = this.text.charCodeAt(this.at + 1)
        if (escaped !== 34 && escaped !== 92) return undefined
        value += String.fromCharCode(escaped)
        this.at += 2
        chunkStart = this.at
        continue
      }
      if (code < 0x20 || code > 0x7e) return undefined
      this.at++
    }
  }

  /** §4.2.6: token chars plus ":" and "/". */
  private token(): string {
    const start = this.at++
    while (isTokenChar(this.peek())) this.at++
    return this.text.slice(start, this.at)
  }

  /** §4.2.7: validated (base64 alphabet between colons) and skipped. */
  private byteSequence(): null | undefined {
    this.at++
    for (;;) {
      if (this.done()) return undefined
      const code = this.peek()
      this.at++
      if (code === 58) return null
      if (!(isAlpha(code) || isDigit(code) || code === 43 || code === 47 || code === 61)) return undefined
    }
  }

  /** §4.2.8: ?1 or ?0. */
  private boolean(): boolean | undefined {
    const code = this.text.charCodeAt(this.at + 1)
    if (code !== 48 && code !== 49) return undefined
    this.at += 2
    return code === 49
  }
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57
}
function isLcAlpha(code: number): boolean {
  return code >= 97 && code <= 122
}
function isAlpha(code: number): boolean {
  return isLcAlpha(code) || (code >= 65 && code <= 90)
}
/** RFC 9110 tchar, plus ":" and "/" (RFC 8941 sf-token). */
function isTokenChar(code: number): boolean {
  if (isAlpha(code) || isDigit(code)) return true
  switch (code) {
    case 33: // !
    case 35: // #
    case 36: // $
    case 37: // %
    case 38: // &
    case 39: // '
    case 42: // *
    case 43: // +
    case 45: // -
    case 46: // .
    case 94: // ^
    case 95: // _
    case 96: // `
    case 124: // |
    case 126: // ~
    case 58: // :
    case 47: // /
      return true
    default:
      return false
  }
}
