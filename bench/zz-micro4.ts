import { createLimiter } from '../src/client/create-limiter.js'
import { none } from '../src/core/pacers/index.js'
const outcome = { signal: { kind: 'ok' as const, status: 200 }, value: 1, retryable: true }
for (const [name, limiter] of [['atb', createLimiter()], ['none', createLimiter({ strategy: none() })], ['none, no deadline', createLimiter({ strategy: none(), deadlineMs: Infinity })]] as const) {
  for (let r = 0; r < 3; r++) {
    const n = 200_000
    const start = performance.now(); const cpu0 = process.cpuUsage()
    await Promise.all(Array.from({ length: 64 }, async () => { for (let i = 0; i < n / 64; i++) await limiter.run({ scope: 'x', attempt: () => Promise.resolve(outcome) }) }))
    const c = process.cpuUsage(cpu0); console.log(name, ((c.user + c.system) / n).toFixed(2), 'cpu µs/job')
  }
  await limiter.close()
}
