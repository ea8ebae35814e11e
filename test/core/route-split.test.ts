import { describe, expect, it } from 'vitest'
import { laneRoute, RouteOutcomes, splitPolicyName } from '../../src/core/route-split.js'
import { MAX_POLICY_NAME_LENGTH } from '../../src/core/scope.js'

const POST = 'POST /products'
const GET = 'GET /items'

/** Records `pattern` in order: `p` = POST 429, `P` = POST 200, `g` = GET 429, `G` = GET 200. */
function play(outcomes: RouteOutcomes, pattern: string): void {
  for (const c of pattern) outcomes.record(c === 'p' || c === 'P' ? POST : GET, c === 'p' || c === 'g')
}

describe('RouteOutcomes.verdict', () => {
  it('splits a route refused again and again while another route keeps being admitted', () => {
    const o = new RouteOutcomes()
    play(o, 'pGpGpG')
    expect(o.verdict(POST)).toEqual({
      split: true,
      trial: true,
      throttled: 3,
      outcomes: 3,
      otherSuccesses: 3,
      otherThrottled: 0,
      refusedBetweenOthers: 2,
    })
  })

  it('never splits on one or two 429s', () => {
    const o = new RouteOutcomes()
    play(o, 'pGGpGGG')
    expect(o.verdict(POST)).toMatchObject({ split: false, throttled: 2 })
  })

  it('does not split a burst whose last requests happened to be the route (a shared quota looks the same)', () => {
    const o = new RouteOutcomes()
    play(o, 'ppppGGGG')
    expect(o.verdict(POST)).toMatchObject({ split: false, throttled: 4, otherSuccesses: 4, refusedBetweenOthers: 0 })
  })

  it('wants the route refused between admissions of others at least twice', () => {
    const o = new RouteOutcomes()
    play(o, 'pppGpG') // one refusal between others' successes
    expect(o.verdict(POST)).toMatchObject({ split: false, refusedBetweenOthers: 1 })
  })

  it('wants at least a third of the route refused since its first 429', () => {
    const o = new RouteOutcomes()
    play(o, 'pGPPPPpGPPPPpG') // 3 of 11
    expect(o.verdict(POST)).toMatchObject({ split: false, throttled: 3, outcomes: 11, refusedBetweenOthers: 2 })
    const o2 = new RouteOutcomes()
    play(o2, 'PPPPpGPpGPpG') // 3 of 5: the successes before the first 429 do not count
    expect(o2.verdict(POST)).toMatchObject({ split: true, throttled: 3, outcomes: 5 })
  })

  it('counts only other successes after the route first 429 in the window', () => {
    const o = new RouteOutcomes()
    play(o, 'GGGGGpGpp')
    expect(o.verdict(POST)).toMatchObject({ split: false, otherSuccesses: 1 })
  })

  it('never splits when the other routes are throttled too (a shared quota)', () => {
    const o = new RouteOutcomes()
    play(o, 'pGgpGpGgGpG')
    expect(o.verdict(POST)).toMatchObject({ split: false, otherThrottled: 2 })
  })

  it('tolerates a rare 429 on other routes (at most a tenth of their successes)', () => {
    const o = new RouteOutcomes()
    play(o, 'pGGGGGgGGGGGpGpG')
    expect(o.verdict(POST)).toMatchObject({ split: true, otherThrottled: 1, otherSuccesses: 11 })
  })

  it("remembers another route's last 429 beyond its ring", () => {
    const o = new RouteOutcomes()
    // The GET 429 has left GET's ring of 12, but it is still in the window: the lane's
    // 429s were not all the POST's (so its pacer is not the POST's alone).
    play(o, `pg${'G'.repeat(14)}pGpG`)
    expect(o.verdict(POST)).toMatchObject({ split: true, otherThrottled: 1, otherSuccesses: 12 })
  })

  it('is quiet once no 429 was seen in 24 outcomes, however long they took', () => {
    const o = new RouteOutcomes()
    play(o, 'pG')
    expect(o.quiet()).toBe(false)
    play(o, 'G'.repeat(22))
    expect(o.quiet()).toBe(false)
    play(o, 'G')
    expect(o.quiet()).toBe(true)
  })

  it('puts a route on trial at its first 429 when another route waits or was admitted since, none refused', () => {
    const o = new RouteOutcomes()
    play(o, 'p')
    expect(o.verdict(POST)).toMatchObject({ trial: false, split: false })
    expect(o.verdict(POST, true)).toMatchObject({ trial: true, split: false, throttled: 1 })
    play(o, 'G')
    expect(o.verdict(POST)).toMatchObject({ trial: true, otherSuccesses: 1 })
    const shared = new RouteOutcomes()
    play(shared, 'gpG')
    expect(shared.verdict(POST, true)).toMatchObject({ trial: false, otherThrottled: 1 })
  })

  it('bounds its memory: at most maxRoutes routes, the stalest dropped first', () => {
    const o = new RouteOutcomes(4)
    for (let i = 0; i < 10; i++) o.record(`GET /r${i}`, false)
    expect(o.size).toBe(4)
    o.record(POST, true)
    expect(o.size).toBe(4)
    for (let i = 0; i < 100; i++) o.record(POST, true)
    expect(o.size).toBe(4)
    expect(o.verdict(POST)).toMatchObject({ throttled: 12, outcomes: 12 }) // 12 outcomes kept per route
  })

  it('forget drops a route', () => {
    const o = new RouteOutcomes()
    play(o, 'pGpGpG')
    expect(o.verdict(POST).split).toBe(true)
    o.forget(POST)
    expect(o.verdict(POST)).toMatchObject({ split: false, throttled: 0 })
  })

  it('splits nothing when only one route was seen', () => {
    const o = new RouteOutcomes()
    play(o, 'pppPpppp')
    expect(o.verdict(POST).split).toBe(false)
  })
})

describe('splitPolicyName and laneRoute', () => {
  it('names a route by method and path template', () => {
    expect(laneRoute('post', '/products/42')).toBe('POST /products/:id')
    expect(splitPolicyName('POST /products')).toBe('~route:POST /products')
  })

  it('caps long names at MAX_POLICY_NAME_LENGTH, keeping different routes distinct', () => {
    const a = splitPolicyName(`GET /${'a'.repeat(100)}/one`)
    const b = splitPolicyName(`GET /${'a'.repeat(100)}/two`)
    expect(a).toHaveLength(MAX_POLICY_NAME_LENGTH)
    expect(b).toHaveLength(MAX_POLICY_NAME_LENGTH)
    expect(a).not.toBe(b)
    expect(a.startsWith('~route:GET /aaa')).toBe(true)
  })
})
