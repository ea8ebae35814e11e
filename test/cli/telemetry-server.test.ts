import { describe, expect, it } from 'vitest'
import { parseServerArgs } from '../../src/cli/telemetry-server.js'

describe('parseServerArgs', () => {
  it('reads port, redis, quotas and tokens', () => {
    expect(parseServerArgs(['--port', '9000', '--redis', 'redis://127.0.0.1:6390', '--quota', 'https://api.example.com=80', '--token', 'acme=t1:https://api.example.com'])).toEqual({
      port: 9000,
      host: '127.0.0.1',
      redis: 'redis://127.0.0.1:6390',
      quotas: { 'https://api.example.com': { perMinute: 80 } },
      tokens: { t1: { tenant: 'acme', scopes: ['https://api.example.com'] } },
      trustProxy: false,
    })
    expect(parseServerArgs(['--trusted-token', 'ops=t2:*', '--admin-token', 'root', '--trust-proxy'])).toMatchObject({
      tokens: { t2: { tenant: 'ops', scopes: '*', trusted: true } },
      adminToken: 'root',
      trustProxy: true,
    })
    expect(parseServerArgs([])).toMatchObject({ port: 8787, quotas: {}, tokens: {} })
    expect(parseServerArgs([])).not.toHaveProperty('windowMs')
    expect(parseServerArgs(['--window-ms', '1800000'])).toMatchObject({ windowMs: 1_800_000 })
  })
  it.each([[['--port', 'x']], [['--quota', 'a=0']], [['--quota', 'nope']], [['--token', 'x']], [['--bogus']], [['--token', 't1:*', '--admin-token', 't1']], [['--window-ms', '0']], [['--window-ms', 'x']], [['--window-ms', '1e12']]])('rejects %j', (argv) => {
    expect(typeof parseServerArgs(argv)).toBe('string')
  })
})
