import { describe, expect, it } from 'vitest'
import {
  parseSfDictionary,
  parseSfList,
  type SfMember,
} from '../../../src/core/signals/structured-field.js'

/** A plain-object view of members, for readable expectations. */
function plain(member: SfMember): unknown {
  if ('items' in member) return { items: member.items.map(plain), params: Object.fromEntries(member.params) }
  return { value: member.value, params: Object.fromEntries(member.params) }
}

describe('parseSfList', () => {
  it.each([
    [
      'named policies (RateLimit-Policy -10)',
      '"burst";q=100;w=60,"daily";q=1000;w=86400',
      [
        { value: 'burst', params: { q: 100, w: 60 } },
        { value: 'daily', params: { q: 1000, w: 86400 } },
      ],
    ],
    [
      'field lines joined with ", " and OWS',
      '"default";r=50;t=30 ,\t"daily";r=5',
      [
        { value: 'default', params: { r: 50, t: 30 } },
        { value: 'daily', params: { r: 5 } },
      ],
    ],
    ['tokens, decimals, booleans', 'a;x=1.25;y=?0, *b/c:d;z', [
      { value: 'a', params: { x: 1.25, y: false } },
      { value: '*b/c:d', params: { z: true } },
    ]],
    ['byte sequence skipped as null', '"p";pk=:cHJvamVjdC0xMjM=:;q=10', [{ value: 'p', params: { pk: null, q: 10 } }]],
    ['escaped string', '"a\\"b\\\\c"', [{ value: 'a"b\\c', params: {} }]],
    ['negative integer', '-12', [{ value: -12, params: {} }]],
    ['inner list', '(1 "x");p=1, 2', [
      { items: [{ value: 1, params: {} }, { value: 'x', params: {} }], params: { p: 1 } },
      { value: 2, params: {} },
    ]],
    ['empty field', '', []],
    ['duplicate param: last wins', 'a;q=1;q=2', [{ value: 'a', params: { q: 2 } }]],
  ])('parses %s', (_label, text, expected) => {
    expect(parseSfList(text)?.map(plain)).toEqual(expected)
  })

  it.each([
    ['trailing comma', '"a";q=1,'],
    ['empty member', '"a", ,"b"'],
    ['unterminated string', '"abc'],
    ['non-ASCII in a string', '"caf\u00e9"'],
    ['bad escape', '"a\\n"'],
    ['upper-case key', 'a;Q=1'],
    ['16-digit integer', '1234567890123456'],
    ['4 fraction digits', '1.2345'],
    ['13 integer digits in a decimal', '1234567890123.5'],
    ['lone minus', '-'],
    ['dot without fraction', '1.'],
    ['dictionary syntax', 'limit=100, remaining=50'],
    ['junk', '@@@'],
    ['RFC 9651 date', '@1659578233'],
    ['unterminated byte sequence', ':abc'],
    ['bad boolean', '?2'],
    ['unterminated inner list', '(1 2'],
    ['missing separator', '"a""b"'],
  ])('rejects %s', (_label, text) => {
    expect(parseSfList(text)).toBeUndefined()
  })
})

describe('parseSfDictionary', () => {
  it('parses the draft-7 RateLimit form', () => {
    const dictionary = parseSfDictionary('limit=100, remaining=50, reset=5')
    expect(dictionary && Object.fromEntries([...dictionary].map(([key, member]) => [key, plain(member)]))).toEqual({
      limit: { value: 100, params: {} },
      remaining: { value: 50, params: {} },
      reset: { value: 5, params: {} },
    })
  })

  it('reads a bare key as boolean true with its params', () => {
    const member = parseSfDictionary('a;w=10')?.get('a')
    expect(member && plain(member)).toEqual({ value: true, params: { w: 10 } })
  })

  it.each([
    ['trailing comma', 'a=1,'],
    ['string key', '"a";r=1'],
    ['missing value', 'a='],
    ['upper-case key', 'Limit=100'],
  ])('rejects %s', (_label, text) => {
    expect(parseSfDictionary(text)).toBeUndefined()
  })
})
