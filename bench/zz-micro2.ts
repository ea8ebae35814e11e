import { createLimiter } from '../src/client/create-limiter.js'
const limiter = createLimiter()
const outcome = { signal: { kind: 'ok' as const, status: 200 }, value: 1, retryable: true }
async function bench(name: string, withSignal: boolean, listen: boolean, n: number) {
  const start = performance.now()
  const workers = Array.from({ length: 64 }, async () => {
    for (let i = 0; i < n / 64; i++) {
      const ac = withSignal ? new AbortController() : undefined
      await limiter.run({ scope: 'x', signal: ac?.signal, attempt: (s) => {
        if (listen) { const f = () => {}; s.addEventListener('abort', f); s.removeEventListener('abort', f) }
        return Promise.resolve(outcome) } })
    }
  })
  await Promise.all(workers)
  console.log(name, (((performance.now() - start) * 1000) / n).toFixed(2), 'µs/job')
}
for (let r = 0; r < 3; r++) {
  await bench('no signal      ', false, false, 200_000)
  await bench('caller signal  ', true, false, 200_000)
  await bench('signal + listen', true, true, 200_000)
}
await limiter.close()
