// Server guidance for the default ATB: Retry-After (`retryAt`) and the quota hints
// (`remaining` units until `resetAt`). These are lane-wide: the quota is shared by every
// caller of the lane, so one response's "wait until T" holds every attempt back.
import type { Signal } from '../types.js'

export interface QuotaGuidance {
  /** Epoch ms before which nothing may be sent (the latest Retry-After seen). */
  retryAt: number
  /** Units the server said were left, as of `hintAt`; undefined until a hint arrives. */
  remaining?: number
  /** When `remaining` is replenished. */
  resetAt?: number
  /** When the hint arrived. */
  hintAt?: number
  /** Units this lane sent since the hint (they are not yet counted in `remaining`). */
  sentSinceHint: number
}

export function emptyGuidance(): QuotaGuidance {
  return { retryAt: 0, sentSinceHint: 0 }
}

/** Largest plausible distance into the future for a server time (a day): beyond it is nonsense, not guidance. */
export const MAX_GUIDANCE_AHEAD_MS = 86_400_000

function plausibleFuture(at: number | undefined, now: number): at is number {
  return at !== undefined && Number.isFinite(at) && at > now && at - now <= MAX_GUIDANCE_AHEAD_MS
}

/** Take in what a response said. Malformed or implausible values are ignored. */
export function absorbGuidance(guidance: QuotaGuidance, now: number, signal: Signal): void {
  if (plausibleFuture(signal.retryAt, now)) guidance.retryAt = Math.max(guidance.retryAt, signal.retryAt)
  const { remaining, resetAt } = signal
  if (remaining !== undefined && Number.isFinite(remaining) && remaining >= 0) {
    guidance.remaining = remaining
    // Without a usable reset time the count cannot be spread or gated on: it is kept but
    // inert (hasLiveHint is false) until a response brings a reset.
    guidance.resetAt = plausibleFuture(resetAt, now) ? resetAt : undefined
    guidance.hintAt = now
    guidance.sentSinceHint = 0
  }
}

/** Whether the lane currently holds a quota hint that has not expired. */
export function hasLiveHint(guidance: QuotaGuidance, now: number): boolean {
  return guidance.remaining !== undefined && guidance.resetAt !== undefined && guidance.resetAt > now
}

export function noteSent(guidance: QuotaGuidance, cost: number): void {
  if (guidance.remaining !== undefined) guidance.sentSinceHint += cost
}

/** Hard gates: Retry-After, and an exhausted quota until it resets. 0 = open. */
export function gateDelayMs(guidance: QuotaGuidance, now: number, cost: number): number {
  let until = guidance.retryAt
  if (hasLiveHint(guidance, now)) {
    const left = (guidance.remaining as number) - guidance.sentSinceHint
    if (left <= 0 || left < cost) until = Math.max(until, guidance.resetAt as number)
  }
  return Math.max(0, until - now)
}

/**
 * Spread what remains over the time left, but only when the lane's current pace would
 * exhaust it before the reset: a large quota never slows a clean API.
 * `pacePerSecond` is the lane's recent send rate (units/s); `lastSendAt` its last send.
 */
export function spreadDelayMs(
  guidance: QuotaGuidance,
  now: number,
  cost: number,
  pacePerSecond: number,
  lastSendAt: number | undefined,
): number {
  if (!hasLiveHint(guidance, now)) return 0
  const left = (guidance.remaining as number) - guidance.sentSinceHint
  const timeLeftMs = (guidance.resetAt as number) - now
  if (left - cost >= (pacePerSecond * timeLeftMs) / 1000) return 0
  if (left <= 0) return timeLeftMs
  const spacingMs = (timeLeftMs / left) * cost
  return lastSendAt === undefined ? 0 : Math.max(0, lastSendAt + spacingMs - now)
}
