import { describe, expect, it } from 'vitest'
import { forwardedFor, sourceKey } from '../../src/server/source-address.js'

describe('sourceKey', () => {
  it.each([
    ['127.0.1.5', '127.0.1.5'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::1', '2001:db8:1:2::/64'],
    ['2001:DB8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s → %s', (address, key) => {
    expect(sourceKey(address)).toBe(key)
  })
})

describe('forwardedFor', () => {
  it('takes the entry the nearest proxy appended', () => {
    expect(forwardedFor('203.0.113.1, 10.0.0.2')).toBe('10.0.0.2')
    expect(forwardedFor('198.51.100.7')).toBe('198.51.100.7')
    expect(forwardedFor(null)).toBeUndefined()
    expect(forwardedFor(' , ')).toBeUndefined()
  })
})
