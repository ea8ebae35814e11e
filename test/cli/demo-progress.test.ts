import { describe, expect, it } from 'vitest'
import { demoProgress } from '../../src/cli/demo-progress.js'

describe('demoProgress', () => {
  it('on a terminal, redraws one line with every strategy and ends it when all are done', () => {
    const written: string[] = []
    let now = 0
    const progress = demoProgress({ isTTY: true, write: (t) => written.push(t) }, ['exponential', 'polite-fetch'], () => now)
    const a = progress.of(0)
    const b = progress.of(1)
    a(200, 800)
    now = 3_000
    b(400, 800)
    expect(written).toEqual([
      '\rexponential  25% 200/800 · polite-fetch   0% 0/? · 0s',
      '\rexponential  25% 200/800 · polite-fetch  50% 400/800 · 3s',
    ])
    a(800, 800)
    b(800, 800)
    expect(written.slice(-2)).toEqual(['\rexponential 100% 800/800 · polite-fetch 100% 800/800 · 3s', '\n'])
  })

  it('elsewhere, writes a line per strategy at each quarter, and nothing in between', () => {
    const written: string[] = []
    const progress = demoProgress({ isTTY: false, write: (t) => written.push(t) }, ['exponential', 'polite-fetch'], () => 0)
    const a = progress.of(0)
    for (let done = 1; done <= 8; done++) a(done, 8)
    progress.of(1)(3, 8)
    expect(written).toEqual([
      'exponential: 25% (2/8 requests) after 0s\n',
      'exponential: 50% (4/8 requests) after 0s\n',
      'exponential: 75% (6/8 requests) after 0s\n',
      'exponential: 100% (8/8 requests) after 0s\n',
      'polite-fetch: 25% (3/8 requests) after 0s\n',
    ])
  })
})
