// Shared by the undici shells' tests: scripted replies and a strategy whose pacing is known.
import type { Pacer, Signal, Strategy } from '../../src/core/types.js'
import type { Reply } from './scripted-server.js'

/** 429 (or `reply`) for the first `count` requests the server sees, then 200s naming their number. */
export const throttleFirst = (count: number, reply: Reply = { status: 429, body: 'slow down' }) => (n: number): Reply =>
  n <= count ? reply : { status: 200, headers: { 'x-answer': String(n) }, body: `ok ${n}` }

/** A strategy whose pacing after congestion is known: one attempt per `spacingMs`. Records what it is fed. */
export function recordingStrategy(spacingMs: number): { strategy: Strategy; sends: number[]; results: Signal[] } {
  const sends: number[] = []
  const results: Signal[] = []
  let congested = false
  let nextAt = 0
  const pacer: Pacer = {
    delayMs: (now) => (congested ? Math.max(0, nextAt - now) : 0),
    onSend(now) {
      sends.push(now)
      if (congested) nextAt = now + spacingMs
    },
    onResult(now, signal) {
      results.push(signal)
      if (signal.kind === 'throttled') {
        congested = true
        nextAt = Math.max(nextAt, now + spacingMs)
      }
    },
    toJSON: (now) => ({ kind: 'recording', version: 1, savedAt: now }),
    get ratePerSecond() {
      return congested ? 1000 / spacingMs : Infinity
    },
    tokens: () => Infinity,
  }
  return { strategy: { name: 'recording', create: () => pacer }, sends, results }
}
