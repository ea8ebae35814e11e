// The fake-id flood of issue 17, over real HTTP: 27 honest clients on 27 loopback source
// addresses share a tenant token with an attacker who invents 10 000 client ids (each
// claiming the largest backlog, attempts and 429s), from 1 address and then from 8. The
// server learns each address from the socket, as deployed; the honest fair share must move
// by at most 2x. Rate limits are off, so the bound shown is the structural one.
import { Agent } from 'node:http'
import { postReportFrom } from './transports.js'
import { afterEach, describe, expect, it } from 'vitest'
import { serve } from '../../src/server/serve.js'
import type { RunningServer } from '../../src/server/serve.js'

const TOKEN = 'public-page-token'
const HONEST = 27
const FAKE_IDS = 10_000

function poster(url: string) {
  const agents = new Map<string, Agent>()
  const post = (localAddress: string, body: object): Promise<{ status: number; json: any }> => {
    let agent = agents.get(localAddress)
    if (!agent) agents.set(localAddress, (agent = new Agent({ keepAlive: true, maxSockets: 8, localAddress })))
    return postReportFrom(url, localAddress, TOKEN, body, agent)
  }
  return { post, close: () => { for (const agent of agents.values()) agent.destroy() } }
}

describe('a fake-id flood from inside the honest fleet\'s token', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it.each([1, 8])('moves the honest fair share by at most 2x from %i address(es)', async (addresses) => {
    server = await serve({
      port: 0,
      options: { auth: { tokens: { [TOKEN]: { tenant: 'shop', scopes: ['api'] } } }, quotas: { api: { perMinute: 80 } }, rateLimit: false },
    })
    const { post, close } = poster(server.url)
    try {
      const honestShare = async () => {
        const shares: number[] = []
        for (let i = 0; i < HONEST; i++) {
          const reply = await post(`127.0.1.${i + 1}`, { clientId: `honest-${i}`, attempts: 2, throttled: 0, backlog: 3 })
          expect(reply.status).toBe(200)
          shares.push(reply.json.fairSharePerSecond)
        }
        return shares.reduce((a, b) => a + b, 0) / shares.length
      }
      await honestShare()
      const before = await honestShare()
      let next = 0
      const attacker = async () => {
        for (let i = next++; i < FAKE_IDS; i = next++) {
          const reply = await post(`127.0.2.${(i % addresses) + 1}`, { clientId: `fake-${i}`, attempts: 10_000, throttled: 10_000, backlog: 1_000_000 })
          expect(reply.status).toBe(200)
        }
      }
      await Promise.all(Array.from({ length: 8 }, attacker))
      const after = await honestShare()
      const movedBy = before / after
      console.log(`fake-id flood from ${addresses} address(es): honest fair share ${before.toPrecision(4)}/s -> ${after.toPrecision(4)}/s (${movedBy.toFixed(2)}x)`)
      expect(movedBy).toBeLessThanOrEqual(2)
      expect(movedBy).toBeGreaterThanOrEqual(1) // the attacker does count, boundedly
    } finally {
      close()
    }
  }, 60_000)
})
