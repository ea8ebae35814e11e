// Every option of the limiter and the fetch client, with its default, in one place.
// Options are validated eagerly (at create time) with messages that name the option,
// what it expects and what it got, so a typo fails at start-up, not at the first 429.
import { atb } from '../core/pacers/index.js'
import { checkKnownOptions, mustBeError } from '../core/pacers/option-error.js'
import type { Clock, Random, Store, Strategy } from '../core/types.js'
import { systemClock } from './system-clock.js'
import type { AnyClock } from './timer.js'
import { canStartTimerWorker, workerClock } from './worker-clock.js'
import type { ClientTelemetryOptions } from './client-telemetry.js'
import type { Limiter } from './create-limiter.js'
import type { FetchImplementation } from './fetch-types.js'
import type { GiveUpMode } from './limiter-types.js'

export interface LimiterOptions {
  /** How each lane paces its attempts. @default atb() */
  strategy?: Strategy
  /**
   * Time source and sleeper; inject a manual clock in tests or the simulator. @default systemClock;
   * in a page, one whose timers also run in a worker while the page is hidden (worker-clock.ts)
   */
  clock?: Clock
  /** Uniform random numbers in [0, 1), for jitter and the pacers. @default Math.random */
  random?: Random
  /** Per-attempt timeout in ms; a timed-out attempt is an `error` signal. @default Infinity (none, like fetch) */
  timeoutMs?: number
  /**
   * Whole-call deadline in ms, queue waits and retries included. When the next possible attempt
   * (the server's retryAt, the lane's pacing) lies past it, the call rejects at once with a
   * `DeadlineError` carrying `retryAt`. @default 60_000
   */
  deadlineMs?: number
  /** Maximum retries per call (a call makes at most retryBudget + 1 attempts). @default Infinity */
  retryBudget?: number
  /** Calls waiting per lane; one more rejects at once with `QueueFullError`. @default 10_000 */
  maxQueue?: number
  /**
   * A Retry-After (or retry-after-ms) asking for a longer wait than this fails fast with
   * `RetryAfterTooLongError` carrying `retryAt`, instead of a silent hours-long sleep. @default 60_000
   */
  maxRetryAfterMs?: number
  /** Attempts in flight per lane at once. @default 64 */
  maxInFlight?: number
  /**
   * A lane with nothing queued or in flight for this long is evicted (its state saved to `store`), once it
   * has also been idle for 8 of its own spacings, its pacer's or its traffic's (`idle-eviction.ts`). @default 60_000
   */
  idleMs?: number
  /** Where lanes' pacer state is kept across evictions, reloads and worker restarts. @default none */
  store?: Store
  /** Prefix of the store keys (one key per scope). @default 'polite-fetch:pacer:' */
  storeKeyPrefix?: string
  /** Pacer state changes are written to `store` at most this often per lane (coalesced). @default 1_000 */
  persistIntervalMs?: number
  /**
   * Waits derived from a server's retryAt get a random extra of up to this fraction of the wait
   * (capped by `maxJitterMs`), so clients told the same Retry-After do not wake together. @default 0.1
   */
  jitterRatio?: number
  /** Cap of that extra wait, in ms. @default 1_000 */
  maxJitterMs?: number
  /** First backoff step for retried `error` signals (network failures teach the pacer nothing). @default 100 */
  errorBackoffBaseMs?: number
  /** Largest backoff step for retried `error` signals. @default 10_000 */
  errorBackoffMaxMs?: number
  /**
   * What a call gets when polite-fetch stops retrying it after a response (its deadline, its
   * retry budget, a Retry-After longer than `maxRetryAfterMs`): `'throw'` rejects with the typed
   * error; `'response'` resolves with the server's last 429/503 Response, headers intact, plus
   * `x-polite-fetch-give-up: <reason>; retry-at="<ISO time>"` and `x-should-retry: false`, so an
   * SDK raises its own rate-limit error instead of a connection error and does not retry it. A
   * call that never got a response (queue full, a lane gated past its deadline, abort, close)
   * rejects either way. A shell given this option applies it to its own calls even on a shared
   * `limiter`. @default 'throw'
   */
  giveUp?: GiveUpMode
}

export interface ResolvedLimiterOptions {
  strategy: Strategy
  clock: AnyClock
  random: Random
  timeoutMs: number
  deadlineMs: number
  retryBudget: number
  maxQueue: number
  maxRetryAfterMs: number
  maxInFlight: number
  idleMs: number
  store: Store | undefined
  storeKeyPrefix: string
  persistIntervalMs: number
  jitterRatio: number
  maxJitterMs: number
  errorBackoffBaseMs: number
  errorBackoffMaxMs: number
  giveUp: GiveUpMode
}

export const limiterDefaults = {
  timeoutMs: Infinity,
  deadlineMs: 60_000,
  retryBudget: Infinity,
  maxQueue: 10_000,
  maxRetryAfterMs: 60_000,
  maxInFlight: 64,
  idleMs: 60_000,
  storeKeyPrefix: 'polite-fetch:pacer:',
  persistIntervalMs: 1_000,
  jitterRatio: 0.1,
  maxJitterMs: 1_000,
  errorBackoffBaseMs: 100,
  errorBackoffMaxMs: 10_000,
  giveUp: 'throw',
} as const

/** A description of an outgoing request, for the `scope` and `cost` options (no body: it may be a stream). */
export interface RequestDescriptor {
  url: URL
  /** Upper-case method. */
  method: string
  headers: Headers
}

export interface ClientOptions extends LimiterOptions {
  /** The underlying fetch, looked up on globalThis at each call when omitted (so later polyfills count). */
  fetch?: FetchImplementation
  /**
   * The quota scope (lane) of a request. @default the URL's origin, refined to `origin#policy` once the
   * server named the policy (RateLimit-Policy, X-RateLimit-Bucket, …) that a route draws on
   */
  scope?: (request: RequestDescriptor) => string
  /** Quota units one attempt of a request costs. @default 1 */
  cost?: (request: RequestDescriptor) => number
  /**
   * Request bodies that must be read to be replayed (a Request's body) are buffered up to this many
   * bytes; a larger or streamed body is sent once and not retried (the caller gets the 429 response
   * and a `give-up` event with reason `body-not-replayable`). @default 1_048_576 (1 MiB)
   */
  maxBodyBytes?: number
  /** Routes remembered for scope refinement (method + path template → policy). @default 1_000 */
  maxLearnedRoutes?: number
  /**
   * Learn from status codes alone that a route has a limit of its own: when, in an origin's lane,
   * 429s pile up on one route (method + path template: at least 3 in 30 s, at least a third of its
   * responses, 2 of them between other routes' successes) while the lane's other routes keep
   * succeeding (3 successes since, almost no 429s), the route moves to a lane of its own
   * (`origin#~route:POST /products`, a `split` event) and,
   * when all those 429s were the route's, the origin's lane starts afresh. A shared quota, which
   * throttles every route, never splits; `scope(request)` and policy names the server sends
   * take precedence. @default true
   */
  learnRouteSplits?: boolean
  /**
   * AATB: report attempts and 429s to a telemetry endpoint (`polite-fetch/server`) and pace from the
   * fleet's aggregate. Use with `strategy: aatb()`. Advisory and fail-open: a slow, failing or
   * nonsensical endpoint leaves the client pacing alone. @default none
   */
  telemetry?: ClientTelemetryOptions
  /**
   * Run calls through this limiter instead of a new one, so several shells (this client, the
   * undici interceptor, another client) share one lane per quota. The limiter's own options
   * apply; the limiter options given here are ignored, and `close()` leaves it open. @default a new limiter
   */
  limiter?: Limiter
}

export const clientDefaults = {
  maxBodyBytes: 1_048_576,
  maxLearnedRoutes: 1_000,
  learnRouteSplits: true,
} as const

function fail(name: string, expected: string, value: unknown): never {
  throw mustBeError(`option \`${name}\``, expected, value)
}

/** A rule for a numeric option: what the error says it must be, and the test (NaN fails every test). */
type NumberRule = readonly [expected: string, holds: (value: number) => boolean]

const countOrInfinity = (value: number): boolean => !Number.isFinite(value) || Number.isInteger(value)
const POSITIVE: NumberRule = ['a number > 0', (value) => value > 0]
const NON_NEGATIVE: NumberRule = ['a number >= 0', (value) => value >= 0]
const AT_LEAST_ONE: NumberRule = ['an integer >= 1 (or Infinity)', (value) => value >= 1 && countOrInfinity(value)]

type NumericLimiterOption = { [K in keyof ResolvedLimiterOptions]: ResolvedLimiterOptions[K] extends number ? K : never }[keyof ResolvedLimiterOptions]

/** Every numeric limiter option and its rule; the defaults are `limiterDefaults`. */
const LIMITER_NUMBERS: Record<NumericLimiterOption, NumberRule> = {
  jitterRatio: ['a number in [0, 1]', (value) => value >= 0 && value <= 1],
  retryBudget: ['an integer >= 0 (or Infinity)', (value) => value >= 0 && countOrInfinity(value)],
  timeoutMs: POSITIVE,
  deadlineMs: POSITIVE,
  maxQueue: NON_NEGATIVE,
  maxRetryAfterMs: NON_NEGATIVE,
  maxInFlight: AT_LEAST_ONE,
  idleMs: POSITIVE,
  persistIntervalMs: NON_NEGATIVE,
  maxJitterMs: NON_NEGATIVE,
  errorBackoffBaseMs: NON_NEGATIVE,
  errorBackoffMaxMs: NON_NEGATIVE,
}

function numberOption(name: string, value: unknown, fallback: number, [expected, holds]: NumberRule): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !holds(value)) fail(name, expected, value)
  return value
}

/** Fails unless `value` is undefined or has every named method (a duck-typed seam). */
function seam(name: string, value: unknown, expected: string, methods: readonly string[]): void {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null || methods.some((method) => typeof (value as Record<string, unknown>)[method] !== 'function')) {
    fail(name, expected, value)
  }
}

function checkObject(options: unknown): void {
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options)
}

function checkGiveUp(giveUp: unknown): void {
  if (giveUp !== undefined && giveUp !== 'response' && giveUp !== 'throw') fail('giveUp', "'response' or 'throw'", giveUp)
}

/** The page's clock, shared by its limiters: one timer worker per page at most. */
let pageClock: AnyClock | undefined

/** systemClock, but in a page one whose timers a hidden tab's throttling does not slow. */
function defaultClock(): AnyClock {
  return canStartTimerWorker() ? (pageClock ??= workerClock()) : systemClock
}

// Every option's name at run time, so that a misspelt one throws (JavaScript callers have no
// compiler to catch it). `satisfies` keeps each list exactly the interface's keys.
const LIMITER_KEYS = {
  strategy: 1,
  clock: 1,
  random: 1,
  timeoutMs: 1,
  deadlineMs: 1,
  retryBudget: 1,
  maxQueue: 1,
  maxRetryAfterMs: 1,
  maxInFlight: 1,
  idleMs: 1,
  store: 1,
  storeKeyPrefix: 1,
  persistIntervalMs: 1,
  jitterRatio: 1,
  maxJitterMs: 1,
  errorBackoffBaseMs: 1,
  errorBackoffMaxMs: 1,
  giveUp: 1,
} satisfies Record<keyof LimiterOptions, 1>
const CLIENT_KEYS = {
  fetch: 1,
  scope: 1,
  cost: 1,
  maxBodyBytes: 1,
  maxLearnedRoutes: 1,
  learnRouteSplits: 1,
  telemetry: 1,
  limiter: 1,
} satisfies Record<Exclude<keyof ClientOptions, keyof LimiterOptions>, 1>

/** The names of every limiter option (`LimiterOptions`). */
export const LIMITER_OPTION_NAMES: readonly string[] = Object.keys(LIMITER_KEYS)

/** Throws, naming the nearest option, unless every key of `options` is a `createClient` option. */
export function checkClientOptionNames(options: object): void {
  checkKnownOptions('createClient', options, [...LIMITER_OPTION_NAMES, ...Object.keys(CLIENT_KEYS)])
}

export function resolveLimiterOptions(options: LimiterOptions = {}): ResolvedLimiterOptions {
  checkObject(options)
  const { strategy, clock, random, store } = options
  seam('strategy', strategy, 'a Strategy ({ name, create })', ['create'])
  seam('clock', clock, 'a Clock ({ now, sleep })', ['now', 'sleep'])
  if (random !== undefined && typeof random !== 'function') fail('random', 'a function', random)
  seam('store', store, 'a Store ({ get, set })', ['get', 'set'])
  const resolved = {
    ...limiterDefaults,
    strategy: strategy ?? atb(),
    clock: (clock ?? defaultClock()) as AnyClock,
    random: random ?? Math.random,
    store,
  } as ResolvedLimiterOptions
  for (const name of Object.keys(LIMITER_NUMBERS) as NumericLimiterOption[]) {
    resolved[name] = numberOption(name, options[name], limiterDefaults[name], LIMITER_NUMBERS[name])
  }
  resolved.giveUp = options.giveUp ?? limiterDefaults.giveUp
  checkGiveUp(resolved.giveUp)
  const storeKeyPrefix = options.storeKeyPrefix ?? limiterDefaults.storeKeyPrefix
  if (typeof storeKeyPrefix !== 'string') fail('storeKeyPrefix', 'a string', storeKeyPrefix)
  resolved.storeKeyPrefix = storeKeyPrefix
  return resolved
}

/** What a shell calls on a `limiter` it is given (the `Limiter` interface). */
const LIMITER_METHODS = ['run', 'submit', 'stats', 'on', 'lanes', 'close'] as const satisfies readonly (keyof Limiter)[]

export interface ResolvedClientOptions {
  fetch: FetchImplementation | undefined
  scope: ((request: RequestDescriptor) => string) | undefined
  cost: ((request: RequestDescriptor) => number) | undefined
  maxBodyBytes: number
  maxLearnedRoutes: number
  learnRouteSplits: boolean
  /** Only when given: undefined leaves it to the limiter. */
  giveUp: GiveUpMode | undefined
}

export function resolveClientOptions(options: ClientOptions = {}): ResolvedClientOptions {
  checkObject(options)
  for (const name of ['fetch', 'scope', 'cost'] as const) {
    const value = options[name]
    if (value !== undefined && typeof value !== 'function') fail(name, 'a function', value)
  }
  // Read per call (it holds with a shared `limiter` too), so checked here as well.
  checkGiveUp(options.giveUp)
  // Unchecked, a wrong value surfaced only at the first request, as a TypeError thrown out of
  // client.fetch instead of a rejected promise.
  seam('limiter', options.limiter, 'a Limiter (createLimiter())', LIMITER_METHODS)
  const { learnRouteSplits = clientDefaults.learnRouteSplits } = options
  if (typeof learnRouteSplits !== 'boolean') fail('learnRouteSplits', 'a boolean', learnRouteSplits)
  return {
    fetch: options.fetch,
    scope: options.scope,
    cost: options.cost,
    maxBodyBytes: numberOption('maxBodyBytes', options.maxBodyBytes, clientDefaults.maxBodyBytes, NON_NEGATIVE),
    maxLearnedRoutes: numberOption('maxLearnedRoutes', options.maxLearnedRoutes, clientDefaults.maxLearnedRoutes, AT_LEAST_ONE),
    learnRouteSplits,
    giveUp: options.giveUp,
  }
}
