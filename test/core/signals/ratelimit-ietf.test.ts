import { describe, expect, it } from 'vitest'
import type { Signal } from '../../../src/core/types.js'
import { readSignals } from '../../../src/core/signals/read-signals.js'
import { headersOf, NOW, NOW_SECONDS } from './fixtures.js'

type Fields = Record<string, string | string[]>

describe('IETF RateLimit, draft -08…-10 (named policies)', () => {
  it.each<[string, number, Fields, Signal]>([
    [
      'the draft example',
      200,
      { 'RateLimit-Policy': '"default";q=100;w=60', RateLimit: '"default";r=50;t=30' },
      {
        kind: 'ok',
        status: 200,
        remaining: 50,
        resetAt: NOW + 30_000,
        limit: 100,
        policy: 'default',
        policies: [{ name: 'default', quota: 100, windowMs: 60_000, unit: 'requests' }],
      },
    ],
    [
      'two policies: the one with less remaining wins',
      200,
      {
        'RateLimit-Policy': '"burst";q=100;w=60,"daily";q=1000;w=86400',
        RateLimit: '"burst";r=80;t=12, "daily";r=3;t=40000',
      },
      {
        kind: 'ok',
        status: 200,
        remaining: 3,
        resetAt: NOW + 40_000_000,
        limit: 1000,
        policy: 'daily',
        policies: [
          { name: 'burst', quota: 100, windowMs: 60_000, unit: 'requests' },
          { name: 'daily', quota: 1000, windowMs: 86_400_000, unit: 'requests' },
        ],
      },
    ],
    [
      'split over field lines',
      429,
      {
        'RateLimit-Policy': ['"burst";q=100;w=60', '"daily";q=1000;w=86400'],
        RateLimit: ['"burst";r=0;t=12', '"daily";r=900;t=40000'],
      },
      {
        kind: 'throttled',
        status: 429,
        retryAt: NOW + 12_000,
        remaining: 0,
        resetAt: NOW + 12_000,
        limit: 100,
        policy: 'burst',
        policies: [
          { name: 'burst', quota: 100, windowMs: 60_000, unit: 'requests' },
          { name: 'daily', quota: 1000, windowMs: 86_400_000, unit: 'requests' },
        ],
      },
    ],
    [
      'tie on remaining: the later reset wins',
      200,
      { RateLimit: '"a";r=5;t=10, "b";r=5;t=20' },
      { kind: 'ok', status: 200, remaining: 5, resetAt: NOW + 20_000, policy: 'b' },
    ],
    [
      'a content-bytes quota does not pace attempts',
      200,
      {
        'RateLimit-Policy': '"bytes";q=65536;qu="content-bytes";w=10, "req";q=10;w=1',
        RateLimit: '"bytes";r=0;t=5, "req";r=7;t=1',
      },
      {
        kind: 'ok',
        status: 200,
        remaining: 7,
        resetAt: NOW + 1000,
        limit: 10,
        policy: 'req',
        policies: [
          { name: 'bytes', quota: 65_536, windowMs: 10_000, unit: 'content-bytes' },
          { name: 'req', quota: 10, windowMs: 1000, unit: 'requests' },
        ],
      },
    ],
    [
      'a partition key (byte sequence) is skipped',
      200,
      { RateLimit: '"default";r=9;t=3;pk=:cHJvamVjdC0xMjM=:' },
      { kind: 'ok', status: 200, remaining: 9, resetAt: NOW + 3000, policy: 'default' },
    ],
    [
      'a policy without q is skipped, the rest kept',
      200,
      { 'RateLimit-Policy': '"a";w=60, "b";q=10' },
      { kind: 'ok', status: 200, policies: [{ name: 'b', quota: 10, unit: 'requests' }] },
    ],
    [
      'a negative bare quota is skipped',
      200,
      { 'RateLimit-Policy': '-5, "b";q=10' },
      { kind: 'ok', status: 200, policies: [{ name: 'b', quota: 10, unit: 'requests' }] },
    ],
    [
      'malformed RateLimit is ignored as a whole',
      200,
      { RateLimit: '"default";r=50;t=30,' },
      { kind: 'ok', status: 200 },
    ],
    [
      'negative r is ignored',
      200,
      { RateLimit: '"default";r=-1;t=30' },
      { kind: 'ok', status: 200 },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(readSignals(status, headersOf(fields), NOW)).toStrictEqual(expected)
  })
})

describe('IETF RateLimit, draft -07 (dictionary)', () => {
  it.each<[string, number, Fields, Signal]>([
    [
      'express-rate-limit draft-7',
      200,
      { RateLimit: 'limit=100, remaining=50, reset=5', 'RateLimit-Policy': '100;w=10' },
      {
        kind: 'ok',
        status: 200,
        remaining: 50,
        resetAt: NOW + 5000,
        limit: 100,
        policies: [{ name: 'default', quota: 100, windowMs: 10_000, unit: 'requests' }],
      },
    ],
    [
      'exhausted on a 429 without Retry-After: retry at reset',
      429,
      { RateLimit: 'limit=100, remaining=0, reset=7' },
      {
        kind: 'throttled',
        status: 429,
        retryAt: NOW + 7000,
        remaining: 0,
        resetAt: NOW + 7000,
        limit: 100,
        policies: [{ name: 'default', quota: 100, unit: 'requests' }],
      },
    ],
    [
      'missing remaining is nothing to pace by',
      200,
      { RateLimit: 'limit=100, reset=7' },
      { kind: 'ok', status: 200 },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(readSignals(status, headersOf(fields), NOW)).toStrictEqual(expected)
  })
})

describe('IETF RateLimit, drafts -00…-06 (separate fields) and GitLab', () => {
  it.each<[string, number, Fields, Signal]>([
    [
      'express-rate-limit draft-6',
      200,
      { 'RateLimit-Limit': '100', 'RateLimit-Remaining': '99', 'RateLimit-Reset': '60', 'RateLimit-Policy': '100;w=60' },
      {
        kind: 'ok',
        status: 200,
        remaining: 99,
        resetAt: NOW + 60_000,
        limit: 100,
        policies: [{ name: 'default', quota: 100, windowMs: 60_000, unit: 'requests' }],
      },
    ],
    [
      'draft-03 limit with trailing policies',
      200,
      { 'RateLimit-Limit': '10, 10;w=1, 50;w=60', 'RateLimit-Remaining': '4', 'RateLimit-Reset': '1' },
      {
        kind: 'ok',
        status: 200,
        remaining: 4,
        resetAt: NOW + 1000,
        limit: 10,
        policies: [{ name: 'default', quota: 10, unit: 'requests' }],
      },
    ],
    [
      'GitLab: Unix-time reset, named',
      429,
      {
        'RateLimit-Limit': '60',
        'RateLimit-Name': 'throttle_authenticated_api',
        'RateLimit-Observed': '67',
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(NOW_SECONDS + 58),
        'RateLimit-ResetTime': 'Tue, 23 Sep 2025 12:00:58 GMT',
        'Retry-After': '58',
      },
      {
        kind: 'throttled',
        status: 429,
        retryAt: NOW + 58_000,
        remaining: 0,
        resetAt: NOW + 58_000,
        limit: 60,
        policy: 'throttle_authenticated_api',
        policies: [{ name: 'throttle_authenticated_api', quota: 60, unit: 'requests' }],
      },
    ],
    [
      'junk remaining: nothing read',
      200,
      { 'RateLimit-Limit': '100', 'RateLimit-Remaining': 'lots', 'RateLimit-Reset': '60' },
      { kind: 'ok', status: 200 },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(readSignals(status, headersOf(fields), NOW)).toStrictEqual(expected)
  })
})

describe('vendor spellings of the IETF fields', () => {
  it.each<[string, number, Fields, Signal]>([
    [
      "Cloudflare's API: `Ratelimit`/`Ratelimit-Policy` (its changelog's examples)",
      200,
      { Ratelimit: '"default";r=50;t=30', 'Ratelimit-Policy': '"default";q=1200;w=300' },
      {
        kind: 'ok',
        status: 200,
        remaining: 50,
        resetAt: NOW + 30_000,
        limit: 1200,
        policy: 'default',
        policies: [{ name: 'default', quota: 1200, windowMs: 300_000, unit: 'requests' }],
      },
    ],
    [
      'Cloudflare, a 429 with its rounded-up Retry-After',
      429,
      { Ratelimit: '"default";r=0;t=30', 'Ratelimit-Policy': '"default";q=1200;w=300', 'Retry-After': '30' },
      {
        kind: 'throttled',
        status: 429,
        retryAt: NOW + 30_000,
        remaining: 0,
        resetAt: NOW + 30_000,
        limit: 1200,
        policy: 'default',
        policies: [{ name: 'default', quota: 1200, windowMs: 300_000, unit: 'requests' }],
      },
    ],
    [
      "Atlassian's `Beta-RateLimit`/`Beta-RateLimit-Policy` beside its X-RateLimit fields",
      200,
      {
        'Beta-RateLimit-Policy': '"tenant-app-quota";q=100100;w=3600',
        'Beta-RateLimit': '"tenant-app-quota";r=17842;t=2107',
        'X-Beta-RateLimit-Reason': 'jira-quota-tenant-based',
        'X-RateLimit-Limit': '350',
        'X-RateLimit-Remaining': '349',
      },
      {
        kind: 'ok',
        status: 200,
        remaining: 349,
        limit: 350,
        policies: [
          { name: 'tenant-app-quota', quota: 100100, windowMs: 3_600_000, unit: 'requests' },
          { name: 'default', quota: 350, unit: 'requests' },
        ],
      },
    ],
    [
      'Atlassian, the tenant quota spent: it is the most restrictive',
      429,
      { 'Beta-RateLimit': '"tenant-app-quota";r=0;t=2788', 'X-RateLimit-Limit': '400', 'X-RateLimit-Remaining': '399' },
      {
        kind: 'throttled',
        status: 429,
        retryAt: NOW + 2_788_000,
        remaining: 0,
        resetAt: NOW + 2_788_000,
        policy: 'tenant-app-quota',
        policies: [{ name: 'default', quota: 400, unit: 'requests' }],
      },
    ],
    [
      'both spellings at once: each limit is read against its own pair',
      200,
      {
        'RateLimit-Policy': '"burst";q=100;w=60',
        RateLimit: '"burst";r=40;t=20',
        'Beta-RateLimit-Policy': '"hourly";q=1000;w=3600',
        'Beta-RateLimit': '"hourly";r=900;t=1800',
      },
      {
        kind: 'ok',
        status: 200,
        remaining: 40,
        resetAt: NOW + 20_000,
        limit: 100,
        policy: 'burst',
        policies: [
          { name: 'burst', quota: 100, windowMs: 60_000, unit: 'requests' },
          { name: 'hourly', quota: 1000, windowMs: 3_600_000, unit: 'requests' },
        ],
      },
    ],
  ])('%s', (_label, status, fields, expected) => {
    expect(readSignals(status, headersOf(fields), NOW)).toStrictEqual(expected)
  })
})

describe('draft parameters: the partition key and the proposed renames', () => {
  const policy = { name: 'peruser', quota: 100, windowMs: 60_000, unit: 'requests' }
  it.each<[string, Fields, Signal]>([
    [
      '`pk` on both fields (the draft examples) is ignored',
      { 'RateLimit-Policy': '"peruser";q=100;w=60;pk=:cHsdsRa894==:', RateLimit: '"peruser";r=50;t=30;pk=:cHsdsRa894==:' },
      { kind: 'ok', status: 200, remaining: 50, resetAt: NOW + 30_000, limit: 100, policy: 'peruser', policies: [policy] },
    ],
    [
      '`pk` with no time window reset',
      { RateLimit: '"default";r=999;pk=:dHJpYWwxMjEzMjM=:' },
      { kind: 'ok', status: 200, remaining: 999, policy: 'default' },
    ],
    [
      'a malformed `pk` (not a Byte Sequence in the syntax) drops the field, as any malformed field',
      { RateLimit: '"default";r=9;pk=:not base64!:' },
      { kind: 'ok', status: 200 },
    ],
    [
      'renamed: `a` (available) and `w` (effective window) on RateLimit',
      { 'RateLimit-Policy': '"peruser";q=100;w=60', RateLimit: '"peruser";a=80;w=45' },
      { kind: 'ok', status: 200, remaining: 80, resetAt: NOW + 45_000, limit: 100, policy: 'peruser', policies: [policy] },
    ],
    [
      'renamed, with a partition key',
      { RateLimit: '"peruser";a=0;w=12;pk=:QXBwLTk5OQ==:' },
      { kind: 'ok', status: 200, remaining: 0, resetAt: NOW + 12_000, policy: 'peruser' },
    ],
    [
      'both spellings on one item: the current `r`/`t` win',
      { RateLimit: '"peruser";r=5;t=10;a=50;w=100' },
      { kind: 'ok', status: 200, remaining: 5, resetAt: NOW + 10_000, policy: 'peruser' },
    ],
    [
      'a malformed `r` falls back to a valid `a`',
      { RateLimit: '"peruser";r=-1;a=7;w=3' },
      { kind: 'ok', status: 200, remaining: 7, resetAt: NOW + 3_000, policy: 'peruser' },
    ],
    [
      'an item with neither `r` nor `a` is skipped, the others kept',
      { RateLimit: '"x";t=5, "peruser";a=3;w=4' },
      { kind: 'ok', status: 200, remaining: 3, resetAt: NOW + 4_000, policy: 'peruser' },
    ],
  ])('%s', (_label, fields, expected) => {
    expect(readSignals(200, headersOf(fields), NOW)).toStrictEqual(expected)
  })
})
