// Figures for the README's "Works with" table: each recipe (the real SDK on polite-fetch)
// sends 12 calls at once to a local mock limiting like its vendor (3 per 1 s) and sending
// that vendor's headers. Prints attempts, 429s, duration; writes bench/results/recipes.json.
import { writeFileSync } from 'node:fs'
import { burst } from '../test/recipes/burst.js'
import { makeRecipe, RECIPES } from '../test/recipes/recipes.js'
import { startVendorMock } from '../test/recipes/vendor-mock.js'

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 3
const rows: object[] = []
console.log('| recipe | run | ok | requests | 429s | in first 1 s | duration |')
for (const name of RECIPES) {
  for (let run = 1; run <= runs; run++) {
    const recipe0 = makeRecipe(name, 'http://127.0.0.1')
    const server = await startVendorMock(recipe0.vendor)
    await recipe0.client.close()
    const recipe = makeRecipe(name, server.url)
    const result = await burst(recipe, server)
    await recipe.client.close()
    await server.close()
    rows.push({ recipe: name, run, ...result, failed: result.failed.map(String) })
    console.log(`| ${name} | ${run} | ${result.succeeded}/12 | ${result.requests} | ${result.throttled} | ${result.firstBurstThrottled} | ${(result.durationMs / 1000).toFixed(2)} s |`)
  }
}
writeFileSync('bench/results/recipes.json', `${JSON.stringify({ at: new Date().toISOString(), rows }, null, 2)}\n`)
