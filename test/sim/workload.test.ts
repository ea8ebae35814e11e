import { describe, expect, it } from 'vitest'
import { PAPER_SCENARIOS, scenarioByName } from '../../src/sim/scenarios.js'
import { generateWorkload, startOffsetMs } from '../../src/sim/workload.js'

describe('workloads', () => {
  it('has the paper scenarios: 5 real-trace sizes, 5 and 100 synthetic clients', () => {
    expect(PAPER_SCENARIOS).toHaveLength(15)
    expect(scenarioByName('real-trace-800')).toMatchObject({ clients: 27, requests: 800, family: 'real-trace' })
    expect(scenarioByName('real-trace-400')).toMatchObject({ clients: 18 })
    expect(scenarioByName('synthetic-100c-500')).toMatchObject({ clients: 100, requests: 500 })
    expect(scenarioByName('synthetic-7c-123')).toMatchObject({ clients: 7, requests: 123 })
    expect(scenarioByName('nonsense')).toBeUndefined()
  })

  it('generates exactly N arrivals, sorted, inside each client window', () => {
    for (const scenario of PAPER_SCENARIOS) {
      const w = generateWorkload(scenario, 11)
      expect(w.clients).toHaveLength(scenario.clients)
      let total = 0
      for (const c of w.clients) {
        total += c.arrivalsMs.length
        expect(c.startMs).toBe(startOffsetMs(c.id))
        for (let k = 0; k < c.arrivalsMs.length; k++) {
          const t = c.arrivalsMs[k]!
          expect(t).toBeGreaterThanOrEqual(c.startMs)
          expect(t).toBeLessThan(c.startMs + scenario.windowMs)
          if (k > 0) expect(t).toBeGreaterThanOrEqual(c.arrivalsMs[k - 1]!)
        }
      }
      expect(total).toBe(scenario.requests)
    }
  })

  it('staggers starts by (id * 0.5) % 10 seconds', () => {
    expect([0, 1, 19, 20, 21].map(startOffsetMs)).toEqual([0, 500, 9500, 0, 500])
  })

  it('is a pure function of scenario and seed', () => {
    const s = scenarioByName('real-trace-600')!
    expect(generateWorkload(s, 5)).toEqual(generateWorkload(s, 5))
    expect(generateWorkload(s, 5)).not.toEqual(generateWorkload(s, 6))
  })

  it('splits synthetic load evenly and real-trace load heavy-tailed, every user sending', () => {
    const maxShare = (name: string) => {
      let top = 0
      for (let seed = 0; seed < 20; seed++) {
        const w = generateWorkload(scenarioByName(name)!, seed)
        const counts = w.clients.map((c) => c.arrivalsMs.length)
        if (name.startsWith('real')) expect(Math.min(...counts)).toBeGreaterThanOrEqual(1)
        top += Math.max(...counts) / w.requests
      }
      return top / 20
    }
    expect(maxShare('synthetic-5c-800')).toBeLessThan(0.25)
    // 27 equal users would give each 3.7%; the heavy tail puts one user far above.
    expect(maxShare('real-trace-800')).toBeGreaterThan(0.15)
  })

  it('spreads arrivals like a Poisson process: about N/10 per 30 s slice', () => {
    const w = generateWorkload(scenarioByName('synthetic-5c-800')!, 3)
    const slices = new Array<number>(10).fill(0)
    for (const c of w.clients) for (const t of c.arrivalsMs) slices[Math.floor((t - c.startMs) / 30_000)]!++
    for (const n of slices) expect(n).toBeGreaterThan(40)
  })
})
