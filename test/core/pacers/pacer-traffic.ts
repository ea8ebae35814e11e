// Test helper shared by the ATB tests: drive a pacer through a run of attempts in virtual time.
import type { Pacer, Signal } from '../../../src/core/types.js'

const OK: Signal = { kind: 'ok', status: 200 }

/** `count` attempts, one every `everyMs`, each answered at once with `signal`; returns the time after the last. */
export function traffic(pacer: Pacer, from: number, count: number, everyMs: number, signal: Signal = OK): number {
  let now = from
  for (let i = 0; i < count; i++) {
    pacer.onSend(now, 1)
    pacer.onResult(now, signal)
    now += everyMs
  }
  return now
}
