// The checks every recipe must pass, shared by the recipe test files (one per vendor, so
// vitest runs them side by side).
import { afterEach, expect, it } from 'vitest'
import { burst } from './burst.js'
import { makeRecipe, type Recipe, type RecipeName } from './recipes.js'
import { startVendorMock, type VendorMock } from './vendor-mock.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

export async function recipeAgainstMock(name: RecipeName, mock: Parameters<typeof startVendorMock>[1] = {}): Promise<{ recipe: Recipe; server: VendorMock }> {
  const server = await startVendorMock(makeRecipe(name, 'http://127.0.0.1').vendor, mock)
  const recipe = makeRecipe(name, server.url)
  cleanups.push(() => server.close(), () => recipe.client.close())
  return { recipe, server }
}

const TIMEOUT_MS = 60_000

export function recipeChecks(name: RecipeName): void {
  it(`12 calls at once against 3 per 1 s: all succeed with their own answer, bodies byte-identical on retry, no SDK retry`, async () => {
    const { recipe, server } = await recipeAgainstMock(name)
    const result = await burst(recipe, server)
    expect(result.failed).toEqual([])
    expect(result.echoed).toBe(true)
    expect(result.changedBodies).toEqual([])
    expect(result.sdkRetries).toBe(0)
    // Every request the server saw is one call's first attempt or polite-fetch's retry of a 429.
    expect(result.requests).toBe(12 + result.throttled)
    expect(result.firstBurstThrottled).toBeLessThanOrEqual(9)
  }, TIMEOUT_MS)

  // After the first burst the lane spends each window at what the server says is left (the window
  // announced by RateLimit-Policy, or inferred from the vendor's resets): no 429 at the resets.
  // How soon it is done is measured in virtual time (vendor-burst.test.ts) and by bench/recipes.ts.
  it('no 429 after the first burst', async () => {
    const { recipe, server } = await recipeAgainstMock(name)
    const result = await burst(recipe, server)
    expect(result.succeeded).toBe(12)
    expect(result.throttled).toBeLessThanOrEqual(9)
  }, TIMEOUT_MS)

  it(`with the SDK's default retries and a Retry-After: 120: one attempt per call, the SDK's own rate-limit error`, async () => {
    const { recipe, server } = await recipeAgainstMock(name, { alwaysRetryAfterS: 120 })
    const ids = ['a', 'b', 'c']
    const outcomes = await Promise.allSettled(ids.map((id) => recipe.call(id)))
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected')
      expect(recipe.isRateLimitError((outcome as PromiseRejectedResult).reason)).toBe(true)
    }
    // At most one attempt per call (a call the SDK starts after the first 429 is answered from the
    // lane's gate and never sent), none of them an SDK retry.
    expect(server.requests.length).toBeGreaterThanOrEqual(1)
    expect(server.requests.length).toBeLessThanOrEqual(ids.length)
    expect(new Set(server.requests.map((r) => `${r.path} ${r.body.toString()}`)).size).toBe(server.requests.length)
    expect(server.requests.every((r) => Number(r.headers['x-stainless-retry-count'] ?? 0) === 0)).toBe(true)
    // A call made later, while the Retry-After runs: the same error, and nothing sent.
    const seen = server.requests.length
    const later = await recipe.call('d').then(() => undefined, (error: unknown) => error)
    expect(recipe.isRateLimitError(later)).toBe(true)
    expect(server.requests).toHaveLength(seen)
  }, TIMEOUT_MS)

  if (makeRecipe(name, 'http://127.0.0.1').stream !== undefined) {
    it('12 streaming calls at once: every stream passes through whole', async () => {
      const { recipe, server } = await recipeAgainstMock(name)
      const result = await burst(recipe, server, 12, true)
      expect(result.failed).toEqual([])
      expect(result.echoed).toBe(true)
      expect(result.sdkRetries).toBe(0)
      expect(result.requests).toBe(12 + result.throttled)
    }, TIMEOUT_MS)
  }
}
