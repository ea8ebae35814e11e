// A small, predictable strategy for limiter tests, recording every call the limiter
// makes on its pacers. It does not pace until it sees congestion (like the SDK's
// default); after a throttled or overloaded signal it allows one attempt per
// `intervalMs`; `retryDelayMs` is configurable per-request backoff.
import type { Pacer, PacerInit, PacerState, Signal, Strategy } from '../../src/core/types.js'

export interface RecordedCall {
  method: 'delayMs' | 'onSend' | 'onResult' | 'retryDelayMs'
  now: number
  cost?: number
  signal?: Signal
  failures?: number
}

export class RecordingPacer implements Pacer {
  readonly calls: RecordedCall[] = []
  readonly init: PacerInit
  readonly intervalMs: number
  readonly retryDelay: number
  paced: boolean
  lastSendAt = -Infinity

  constructor(init: PacerInit, intervalMs: number, retryDelay: number) {
    this.init = init
    this.intervalMs = intervalMs
    this.retryDelay = retryDelay
    this.paced = init.state?.kind === 'recording' && init.state.paced === true
  }

  get ratePerSecond(): number {
    return this.paced ? 1000 / this.intervalMs : Infinity
  }

  delayMs(now: number, cost: number): number {
    this.calls.push({ method: 'delayMs', now, cost })
    return this.paced ? Math.max(0, this.lastSendAt + this.intervalMs - now) : 0
  }

  onSend(now: number, cost: number): void {
    this.calls.push({ method: 'onSend', now, cost })
    this.lastSendAt = now
  }

  onResult(now: number, signal: Signal): void {
    this.calls.push({ method: 'onResult', now, signal })
    if (signal.kind === 'throttled' || signal.kind === 'overloaded') this.paced = true
  }

  retryDelayMs(now: number, failures: number, signal: Signal): number {
    this.calls.push({ method: 'retryDelayMs', now, failures, signal })
    return this.retryDelay
  }

  toJSON(now: number): PacerState {
    return { kind: 'recording', version: 1, savedAt: now, paced: this.paced }
  }

  tokens(): number {
    return this.paced ? 0 : Infinity
  }

  /** The signals fed back, in order. */
  results(): Signal[] {
    return this.calls.filter((c) => c.method === 'onResult').map((c) => c.signal as Signal)
  }

  sends(): number[] {
    return this.calls.filter((c) => c.method === 'onSend').map((c) => c.now)
  }
}

export interface RecordingStrategy extends Strategy {
  /** Every pacer created, in order (one per lane creation). */
  readonly pacers: RecordingPacer[]
}

export function recordingStrategy(options: { intervalMs?: number; retryDelayMs?: number } = {}): RecordingStrategy {
  const pacers: RecordingPacer[] = []
  return {
    name: 'recording',
    pacers,
    create(init) {
      const pacer = new RecordingPacer(init, options.intervalMs ?? 100, options.retryDelayMs ?? 0)
      pacers.push(pacer)
      return pacer
    },
  }
}
