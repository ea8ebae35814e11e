import { describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create-client.js'
import { createLimiter } from '../../src/client/create-limiter.js'
import { limiterDefaults, resolveLimiterOptions } from '../../src/client/options.js'
import { systemClock } from '../../src/client/system-clock.js'

describe('options', () => {
  it('documents finite defaults for every wait', () => {
    const resolved = resolveLimiterOptions()
    expect(resolved.deadlineMs).toBe(60_000)
    expect(resolved.maxRetryAfterMs).toBe(60_000)
    expect(resolved.maxInFlight).toBe(64)
    expect(resolved.clock).toBe(systemClock)
    expect(resolved.strategy.name).toBe('atb')
    expect(limiterDefaults.timeoutMs).toBe(Infinity)
  })

  it('rejects bad options at creation with a message naming the option', () => {
    expect(() => createLimiter({ deadlineMs: -1 })).toThrow(/`deadlineMs` must be a number > 0; received -1/)
    expect(() => createLimiter({ maxInFlight: 1.5 })).toThrow(/`maxInFlight`/)
    expect(() => createLimiter({ jitterRatio: 2 })).toThrow(/`jitterRatio`/)
    expect(() => createLimiter({ clock: {} as never })).toThrow(/`clock`/)
    expect(() => createClient({ scope: 'origin' as never })).toThrow(/`scope` must be a function/)
    expect(() => createClient({ maxBodyBytes: Number.NaN })).toThrow(/`maxBodyBytes`/)
    expect(() => createClient({ limiter: {} as never })).toThrow(/`limiter` must be a Limiter/)
    expect(() => createClient({ limiter: 5 as never })).toThrow(/`limiter`/)
  })

  it('rejects a misspelt option, naming the one it was meant to be', () => {
    expect(() => createClient({ deadlinMs: 5000 } as never)).toThrow(/createClient has no option `deadlinMs`; did you mean `deadlineMs`\?/)
    expect(() => createClient({ maxRetryAfterMS: 5000 } as never)).toThrow(/did you mean `maxRetryAfterMs`\?/)
    expect(() => createClient({ learnRoutes: false } as never)).toThrow(/no option `learnRoutes` \(its options: strategy, /)
    // Every documented option is known, the fetch shell's and the limiter's alike.
    const client = createClient({ deadlineMs: 5000, learnRouteSplits: false, maxLearnedRoutes: 10, giveUp: 'response', storeKeyPrefix: 'x:' })
    void client.close()
  })

  it('a malformed job rejects instead of throwing', async () => {
    const limiter = createLimiter()
    await expect(limiter.run({} as never)).rejects.toThrow(TypeError)
    await limiter.close()
  })
})
