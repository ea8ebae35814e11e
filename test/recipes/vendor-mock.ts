// A local HTTP server on 127.0.0.1 that limits like a vendor's API (a fixed window of
// `limit` requests per `windowMs`) and answers in that vendor's words: its rate-limit
// headers on every response, its 429 body, its success bodies and, for the LLM APIs,
// its server-sent events when the request asks to stream. Every request is recorded
// with its body bytes and the SDK's own retry counter, so a test can check that POST
// bodies are replayed byte for byte and that nobody retried twice.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Vendor = 'openai' | 'anthropic' | 'github' | 'ietf'

export interface VendorRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
  atMs: number
  status: number
}

export interface VendorMockOptions {
  limit?: number
  windowMs?: number
  /** Answer every request with a 429 carrying this Retry-After (seconds), whatever the window says. */
  alwaysRetryAfterS?: number
  /** Epoch ms of the server's clock (a manual clock shared with the client in tests). @default Date.now */
  clock?: () => number
}

export interface VendorMock {
  url: string
  requests: VendorRequest[]
  throttled(): number
  close(): Promise<void>
}

interface Window {
  limit: number
  remaining: number
  resetMs: number
  nowMs: number
}

function rateLimitHeaders(vendor: Vendor, w: Window): Record<string, string> {
  const resetS = Math.max(1, Math.ceil(w.resetMs / 1000))
  switch (vendor) {
    case 'openai':
      return {
        'x-ratelimit-limit-requests': String(w.limit),
        'x-ratelimit-remaining-requests': String(w.remaining),
        'x-ratelimit-reset-requests': `${Math.max(1, Math.round(w.resetMs))}ms`,
        'x-ratelimit-limit-tokens': '200000',
        'x-ratelimit-remaining-tokens': '199000',
        'x-ratelimit-reset-tokens': '300ms',
        'x-request-id': `req_${w.nowMs}`,
      }
    case 'anthropic':
      return {
        'anthropic-ratelimit-requests-limit': String(w.limit),
        'anthropic-ratelimit-requests-remaining': String(w.remaining),
        'anthropic-ratelimit-requests-reset': new Date(w.nowMs + w.resetMs).toISOString(),
        'request-id': `req_${w.nowMs}`,
      }
    case 'github':
      return {
        'x-ratelimit-limit': String(w.limit),
        'x-ratelimit-remaining': String(w.remaining),
        'x-ratelimit-reset': String(Math.ceil((w.nowMs + w.resetMs) / 1000)),
        'x-ratelimit-used': String(w.limit - w.remaining),
        'x-ratelimit-resource': 'core',
        'x-github-request-id': `GH:${w.nowMs}`,
      }
    case 'ietf':
      return {
        'ratelimit-policy': `"default";q=${w.limit};w=1`,
        ratelimit: `"default";r=${w.remaining};t=${resetS}`,
      }
  }
}

function throttledBody(vendor: Vendor): { headers: Record<string, string>; body: string } {
  switch (vendor) {
    case 'openai':
      return {
        headers: { 'x-should-retry': 'true' },
        body: JSON.stringify({
          error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' },
        }),
      }
    case 'anthropic':
      return {
        headers: { 'x-should-retry': 'true' },
        body: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } }),
      }
    case 'github':
      return {
        headers: {},
        body: JSON.stringify({ message: 'API rate limit exceeded', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' }),
      }
    case 'ietf':
      return { headers: {}, body: JSON.stringify({ error: 'too many requests' }) }
  }
}

/** The success body, echoing what the request carried so a test can tell the calls apart. */
function successBody(vendor: Vendor, echo: string): string {
  switch (vendor) {
    case 'openai':
      return JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-test',
        choices: [{ index: 0, message: { role: 'assistant', content: echo }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      })
    case 'anthropic':
      return JSON.stringify({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [{ type: 'text', text: echo }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      })
    case 'github':
      return JSON.stringify({ id: 1, name: echo, full_name: `octo/${echo}` })
    case 'ietf':
      return JSON.stringify({ echo })
  }
}

function sse(vendor: Vendor, echo: string): string[] {
  if (vendor === 'openai') {
    const chunk = (content: string, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`
    return [...[...echo].map((c) => chunk(c, null)), chunk('', 'stop'), 'data: [DONE]\n\n']
  }
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  return [
    event('message_start', {
      message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } },
    }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ...[...echo].map((c) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: c } })),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: echo.length } }),
    event('message_stop', {}),
  ]
}

/** What the caller asked to be echoed: the JSON body's `echo` or `title` (the last message for LLM APIs), else the path's last part. */
function echoOf(path: string, body: Buffer): { echo: string; stream: boolean } {
  try {
    const json = JSON.parse(body.toString('utf8')) as { messages?: { content?: unknown }[]; stream?: boolean; echo?: string; title?: string }
    const last = json.messages?.[json.messages.length - 1]?.content
    return { echo: typeof last === 'string' ? last : String(json.echo ?? json.title ?? ''), stream: json.stream === true }
  } catch {
    return { echo: decodeURIComponent(path.split('?')[0]!.split('/').pop() ?? ''), stream: false }
  }
}

export async function startVendorMock(vendor: Vendor, options: VendorMockOptions = {}): Promise<VendorMock> {
  const limit = options.limit ?? 3
  const windowMs = options.windowMs ?? 1_000
  const clock = options.clock ?? Date.now
  // GitHub announces its reset in whole epoch seconds, and its windows end on them: a mock whose
  // windows end between seconds would announce each reset up to a second after it happened.
  const startedAt = vendor === 'github' ? Math.floor(clock() / 1000) * 1000 : clock()
  const requests: VendorRequest[] = []
  let windowIndex = -1
  let used = 0

  const answer = (res: ServerResponse, status: number, headers: Record<string, string>, body: string | string[]): void => {
    if (typeof body === 'string') {
      res.writeHead(status, { 'content-type': 'application/json', ...headers })
      res.end(body)
      return
    }
    // Server-sent events, one write per event, so the client sees a stream, not one chunk.
    res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers })
    let i = 0
    const next = (): void => {
      if (i >= body.length) {
        res.end()
        return
      }
      res.write(body[i++])
      setTimeout(next, 2)
    }
    next()
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const nowMs = clock()
      const index = Math.floor((nowMs - startedAt) / windowMs)
      if (index !== windowIndex) {
        windowIndex = index
        used = 0
      }
      const resetMs = startedAt + (index + 1) * windowMs - nowMs
      const body = Buffer.concat(chunks)
      const path = req.url ?? ''
      const admitted = options.alwaysRetryAfterS === undefined && used < limit
      if (admitted) used++
      const w: Window = { limit, remaining: Math.max(0, limit - used), resetMs, nowMs }
      const status = admitted ? 200 : 429
      requests.push({ method: req.method ?? '', path, headers: req.headers, body, atMs: options.clock ? nowMs : performance.now(), status })
      // On an injected clock the server's Date is that clock's (node:http would send the real time).
      const headers = { ...rateLimitHeaders(vendor, w), ...(options.clock ? { date: new Date(nowMs).toUTCString() } : {}) }
      if (!admitted) {
        const throttled = throttledBody(vendor)
        const retryAfterS = options.alwaysRetryAfterS ?? Math.max(1, Math.ceil(resetMs / 1000))
        answer(res, 429, { ...headers, ...throttled.headers, 'retry-after': String(retryAfterS) }, throttled.body)
        return
      }
      const { echo, stream } = echoOf(path, body)
      answer(res, 200, headers, stream ? sse(vendor, echo) : successBody(vendor, echo))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    throttled: () => requests.filter((r) => r.status === 429).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
