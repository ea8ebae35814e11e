import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_CACHED_ORIGINS, OriginCache } from '../../src/client/origin-cache.js'

function parsedOrigin(href: string): string | null {
  try {
    return new URL(href).origin
  } catch {
    return null
  }
}

describe('OriginCache', () => {
  it('gives the origin the URL parser gives, for plain absolute http(s) URLs', () => {
    const cache = new OriginCache()
    for (const href of [
      'http://127.0.0.1:8080/resource',
      'https://api.example.com/v1/items?page=2#top',
      'https://API.Example.COM:443/x',
      'http://example.com:80',
      'http://user:secret@example.com/path',
      'http://example.com?query-without-path',
      'http://example.com#fragment',
      'http://example.com\\backslash\\path',
      'http://[::1]:3000/v6',
      'https://bücher.example/idn',
      'http://exa\tmple.com/tab-in-host',
      'http://example.com/%zz/not-an-escape',
    ]) {
      expect(cache.originOf(href), href).toBe(new URL(href).origin)
    }
  })

  it('says null when the authority does not parse, as fetch would reject it', () => {
    const cache = new OriginCache()
    expect(cache.originOf('http://exa mple.com/')).toBeNull()
    expect(cache.originOf('http://example.com:99999/')).toBeNull()
    expect(cache.originOf('http://[::1/')).toBeNull()
  })

  it('leaves anything but the plain shape to the full parser', () => {
    const cache = new OriginCache()
    for (const href of [
      '/relative/path',
      'HTTP://example.com/upper-case-scheme',
      ' http://example.com/leading-space',
      'http:///example.com/extra-slash',
      'http:/example.com/one-slash',
      'http:example.com/no-slash',
      'ftp://example.com/',
      'data:text/plain,hello',
      'httpx://example.com/',
    ]) {
      expect(cache.originOf(href), href).toBeUndefined()
    }
  })

  it('does not take a longer host for the last one it saw', () => {
    const cache = new OriginCache()
    expect(cache.originOf('http://a.com/x')).toBe('http://a.com')
    expect(cache.originOf('http://a.com.evil.org/x')).toBe('http://a.com.evil.org')
    expect(cache.originOf('http://a.com:8080/x')).toBe('http://a.com:8080')
    expect(cache.originOf('https://a.com/x')).toBe('https://a.com')
    expect(cache.originOf('http://a.com')).toBe('http://a.com')
    expect(cache.originOf('http://a.co')).toBe('http://a.co')
  })

  it('stays correct past its bound', () => {
    const cache = new OriginCache()
    for (let i = 0; i <= MAX_CACHED_ORIGINS * 2; i++) {
      expect(cache.originOf(`https://tenant-${i}.example/x`)).toBe(`https://tenant-${i}.example`)
    }
    expect(cache.originOf('https://tenant-0.example/y')).toBe('https://tenant-0.example')
  })

  it('agrees with the URL parser on any URL it answers for', () => {
    const cache = new OriginCache()
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true, authoritySettings: { withUserInfo: true, withPort: true } }), (href) => {
        const origin = cache.originOf(href)
        if (origin !== undefined) expect(origin).toBe(parsedOrigin(href))
      }),
    )
  })
})
