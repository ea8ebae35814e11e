// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest'
import { PAGE_MESSAGE } from '../../src/protocol/worker-messages.js'
import {
  readTabMessage,
  TAB_MESSAGE,
  TAB_PROTOCOL_VERSION,
  tabChannelName,
  tabMessage,
  type TabPayload,
} from '../../src/protocol/tab-messages.js'
import { broadcastTabChannel, type TabChannel } from '../../src/tabs/tab-channel.js'

const spec = { scope: 'https://api.example', cost: 1, deadlineAt: 1_000, retryBudget: Infinity, retryErrors: true, attemptsDone: 0 }

const valid: TabPayload[] = [
  { type: TAB_MESSAGE.who, scope: 'https://api.example' },
  { type: TAB_MESSAGE.hello, scope: 'https://api.example' },
  { type: TAB_MESSAGE.claim, scope: 'https://api.example' },
  { type: TAB_MESSAGE.bye },
  { type: TAB_MESSAGE.bye, scope: 'https://api.example' },
  { type: TAB_MESSAGE.call, id: 1, call: { ...spec, priority: 2, label: 'GET https://api.example/a', route: 'GET /a' } },
  { type: TAB_MESSAGE.cancel, id: 1 },
  { type: TAB_MESSAGE.outcome, id: 1, attempt: 1, signal: { kind: 'throttled', status: 429, retryAt: 5, retryResolutionMs: 1 }, retryable: true, neutral: false },
  {
    type: TAB_MESSAGE.outcome,
    id: 2,
    attempt: 1,
    signal: {
      kind: 'ok',
      status: 200,
      remaining: 2,
      resetAt: 1_000,
      limit: 3,
      policy: 'default',
      policies: [{ name: 'default', quota: 3, windowMs: 1_000 }, { name: 'tokens', quota: 9_000, unit: 'tokens' }],
      shouldRetry: false,
    },
    retryable: false,
    neutral: false,
  },
  { type: TAB_MESSAGE.failed, id: 1, attempt: 2, error: { name: 'TypeError', message: 'Failed to fetch' }, finalReason: 'invalid-request' },
  { type: TAB_MESSAGE.grant, id: 1, attempt: 3 },
  { type: TAB_MESSAGE.abortAttempt, id: 1, attempt: 3, error: { name: 'TimeoutError', message: 'timed out' } },
  { type: TAB_MESSAGE.discard, id: 1, attempt: 1 },
  { type: TAB_MESSAGE.settle, id: 1, attempt: 3 },
  { type: TAB_MESSAGE.reject, id: 1, error: { name: 'DeadlineError', message: 'late', retryAt: 9, attempts: 2, request: 'GET x' } },
  { type: TAB_MESSAGE.learnRoute, id: 1, policy: '~route:POST /a' },
  { type: TAB_MESSAGE.subscribe, events: ['throttled', 'retry'] },
  { type: TAB_MESSAGE.event, event: 'throttled', detail: { status: 429 } },
  { type: TAB_MESSAGE.stats, scope: 'https://api.example', id: 4 },
  { type: TAB_MESSAGE.statsReply, scope: 'https://api.example', id: 4, stats: [] },
]

describe('tab protocol', () => {
  it.each(valid.map((payload) => [payload.type, payload] as const))('reads a valid %s message back as sent', (_type, payload) => {
    const message = tabMessage(payload, 'tab-a', 'tab-b')
    expect(readTabMessage(structuredClone(message))).toEqual({ ...payload, v: TAB_PROTOCOL_VERSION, from: 'tab-a', to: 'tab-b' })
  })

  it('ignores another version, a missing sender, foreign and garbage data', () => {
    const grant = tabMessage({ type: TAB_MESSAGE.grant, id: 1, attempt: 1 }, 'tab-a')
    for (const data of [
      { ...grant, v: TAB_PROTOCOL_VERSION + 1 },
      { ...grant, v: undefined },
      { ...grant, from: '' },
      { ...grant, from: 7 },
      { ...grant, to: 5 },
      { ...grant, type: 'polite-fetch:tab:nope' },
      { type: PAGE_MESSAGE.stats }, // the worker protocol is not this one
      { v: TAB_PROTOCOL_VERSION, from: 'x', type: 'other-library' },
      null,
      'polite-fetch:tab:grant',
      42,
      [grant],
    ]) {
      expect(readTabMessage(data), JSON.stringify(data)).toBeUndefined()
    }
  })

  it('ignores messages whose fields are missing or of the wrong kind', () => {
    const bad: Record<string, unknown>[] = [
      { type: TAB_MESSAGE.hello },
      { type: TAB_MESSAGE.bye, scope: 3 },
      { type: TAB_MESSAGE.grant, id: 1, attempt: 0 },
      { type: TAB_MESSAGE.grant, id: -1, attempt: 1 },
      { type: TAB_MESSAGE.grant, id: 1.5, attempt: 1 },
      { type: TAB_MESSAGE.settle, id: 1 },
      { type: TAB_MESSAGE.call, id: 1, call: { ...spec, cost: Number.NaN } },
      { type: TAB_MESSAGE.call, id: 1, call: { ...spec, cost: Infinity } },
      { type: TAB_MESSAGE.call, id: 1, call: { ...spec, scope: undefined } },
      { type: TAB_MESSAGE.call, id: 1, call: { ...spec, retryErrors: 'yes' } },
      { type: TAB_MESSAGE.call, id: 1, call: { ...spec, deadlineAt: -1 } },
      { type: TAB_MESSAGE.call, id: 1 },
      { type: TAB_MESSAGE.outcome, id: 1, attempt: 1, signal: { kind: 'great', status: 200 }, retryable: true, neutral: false },
      { type: TAB_MESSAGE.outcome, id: 1, attempt: 1, signal: { kind: 'ok', status: '200' }, retryable: true, neutral: false },
      { type: TAB_MESSAGE.outcome, id: 1, attempt: 1, signal: { kind: 'ok', status: 200 }, neutral: false },
      { type: TAB_MESSAGE.failed, id: 1, attempt: 1, error: { message: 'no name' } },
      { type: TAB_MESSAGE.reject, id: 1, error: 'DeadlineError' },
      { type: TAB_MESSAGE.subscribe, events: ['throttled', 3] },
      { type: TAB_MESSAGE.event, detail: {} },
      { type: TAB_MESSAGE.stats, scope: 'x' },
    ]
    for (const body of bad) expect(readTabMessage({ ...body, v: TAB_PROTOCOL_VERSION, from: 'tab-a' }), JSON.stringify(body)).toBeUndefined()
  })

  it('drops unknown and ill-typed optional fields instead of passing them on', () => {
    const message = readTabMessage({
      v: TAB_PROTOCOL_VERSION,
      from: 'tab-a',
      type: TAB_MESSAGE.outcome,
      id: 1,
      attempt: 1,
      signal: { kind: 'throttled', status: 429, retryAt: 'soon', remaining: 0, extra: true },
      retryable: true,
      neutral: false,
      reason: 7,
      junk: 'x',
    })
    expect(message).toEqual({
      v: TAB_PROTOCOL_VERSION,
      from: 'tab-a',
      type: TAB_MESSAGE.outcome,
      id: 1,
      attempt: 1,
      signal: { kind: 'throttled', status: 429, remaining: 0 },
      retryable: true,
      neutral: false,
    })
  })

  it('drops an announced policy list that is malformed or too long, and a shouldRetry that is not a boolean', () => {
    const outcome = (signal: object) =>
      readTabMessage({ v: TAB_PROTOCOL_VERSION, from: 'tab-a', type: TAB_MESSAGE.outcome, id: 1, attempt: 1, signal, retryable: true, neutral: false })
    const base = { kind: 'ok', status: 200 }
    for (const policies of [
      'default;q=3',
      [],
      [{ name: 'a', quota: '3' }],
      [{ name: 'a', quota: 3, windowMs: 0 }],
      [{ name: 'a', quota: 3, windowMs: Infinity }],
      [{ name: 'a', quota: -1 }],
      [{ quota: 3 }],
      [{ name: 'a', quota: 3, unit: 5 }],
      Array.from({ length: 17 }, (_, i) => ({ name: `p${i}`, quota: 1, windowMs: 1_000 })),
    ]) {
      expect(outcome({ ...base, policies })).toMatchObject({ signal: base })
      expect((outcome({ ...base, policies }) as { signal: object }).signal).not.toHaveProperty('policies')
    }
    expect((outcome({ ...base, shouldRetry: 'false' }) as { signal: object }).signal).not.toHaveProperty('shouldRetry')
  })

  it('names its channel with the protocol version', () => {
    expect(tabChannelName('app')).toBe(`polite-fetch:tabs:v${TAB_PROTOCOL_VERSION}:app`)
  })
})

describe('the BroadcastChannel wire', () => {
  const open: TabChannel[] = []
  afterEach(() => {
    for (const channel of open.splice(0)) channel.close()
  })

  it('delivers valid messages to the other tabs and never hands malformed or foreign data to a handler', async () => {
    const a = broadcastTabChannel('wire-test')!
    const b = broadcastTabChannel('wire-test')!
    open.push(a, b)
    const seen: unknown[] = []
    b.listen((message) => seen.push(message))
    const raw = new BroadcastChannel(tabChannelName('wire-test'))
    raw.postMessage({ type: TAB_MESSAGE.grant, id: 1, attempt: 1, from: 'x' }) // no version
    raw.postMessage({ v: 99, type: TAB_MESSAGE.grant, id: 1, attempt: 1, from: 'x' })
    raw.postMessage('hello')
    raw.postMessage({ type: PAGE_MESSAGE.subscribe, events: ['retry'] })
    const hello = tabMessage({ type: TAB_MESSAGE.hello, scope: 's' }, 'tab-a')
    a.post(hello)
    await expect.poll(() => seen.length).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toEqual([hello])
    raw.close()
  })
})
