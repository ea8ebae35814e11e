import { describe, expect, it } from 'vitest'
import { SplitLanePacer } from '../../src/core/split-lane-pacer.js'
import type { Pacer } from '../../src/core/types.js'
import { recordingStrategy } from '../helpers/recording-strategy.js'

const throttled = { kind: 'throttled', status: 429 } as const
const ok = { kind: 'ok', status: 200 } as const

function pacers() {
  const strategy = recordingStrategy({ intervalMs: 1_000 })
  const own = strategy.create({ now: 0, random: () => 0 })
  let parent: Pacer | undefined = strategy.create({ now: 0, random: () => 0 })
  const split = new SplitLanePacer(own, () => parent)
  return { own: strategy.pacers[0]!, parent: () => strategy.pacers[1]!, split, setParent: (p: Pacer | undefined) => (parent = p), strategy }
}

describe('SplitLanePacer', () => {
  it("teaches the route's own pacer alone: its 429s never reach the origin's", () => {
    const { own, parent, split } = pacers()
    split.onSend(0, 1)
    split.onResult(10, throttled)
    expect(own.results()).toEqual([throttled])
    expect(parent().results()).toEqual([])
    expect(parent().sends()).toEqual([])
  })

  it("waits for the origin's pacer too: the origin's pace holds for the route", () => {
    const { parent, split } = pacers()
    expect(split.delayMs(0, 1)).toBe(0)
    parent().onResult(0, throttled) // the origin is pacing: one send per second
    parent().onSend(0, 1)
    expect(split.delayMs(400, 1)).toBe(600)
    expect(split.ratePerSecond).toBe(1)
  })

  it('waits for its own pacer when that is the slower', () => {
    const { split } = pacers()
    split.onResult(0, throttled)
    split.onSend(0, 1)
    expect(split.delayMs(250, 1)).toBe(750)
    split.onResult(300, ok)
  })

  it("keeps the last origin pacer it saw when the origin's lane is evicted", () => {
    const { parent, split, setParent } = pacers()
    parent().onResult(0, throttled)
    parent().onSend(0, 1)
    expect(split.delayMs(0, 1)).toBe(1_000)
    setParent(undefined)
    expect(split.delayMs(500, 1)).toBe(500)
  })

  it("writes the route's own state", () => {
    const { split } = pacers()
    split.onResult(0, throttled)
    expect(split.toJSON(5)).toEqual({ kind: 'recording', version: 1, savedAt: 5, paced: true })
  })
})
