import { describe, expect, it } from 'vitest'
import { replyJson } from '../../src/server/reply-json.js'
import type { TelemetryReply } from '../../src/telemetry/protocol.js'

/** A small deterministic generator, so a failure names its case. */
function lcg(seed: number): () => number {
  let state = seed >>> 0
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32
}

describe('replyJson', () => {
  it('writes the text JSON.stringify writes for replies built in protocol order', () => {
    const random = lcg(20261202)
    const scopes = ['https://api.example.com', 'a"b', 'back\\slash', '~!@#$%^&*()_+{}|:<>?', 'x'.repeat(256)]
    const numbers = () => [0, 1, 3, 1e-300, 8.3e-6, 0.2667, 1 / 3, 1e9, 2 ** 53 - 1, random() * 1e6, Math.floor(random() * 1e9)][Math.floor(random() * 11)]!
    for (let i = 0; i < 5_000; i++) {
      const reply: TelemetryReply = {
        v: 1, scope: scopes[i % scopes.length]!, activeClients: 1 + Math.floor(random() * 10_000),
        totalAttempts: numbers(), throttledReports: numbers(), windowMs: 30_000,
      }
      if (random() < 0.7) reply.quotaPerSecond = numbers() || 1
      if (reply.quotaPerSecond !== undefined && random() < 0.9) reply.fairSharePerSecond = numbers() || 0.5
      expect(replyJson(reply)).toBe(JSON.stringify(reply))
      expect(JSON.parse(replyJson(reply))).toEqual(reply)
    }
  })
})
