// A page that paces its fetches with the default strategy must not ship what only the
// fleet-aware strategies use: the telemetry protocol, link and driver, and AATB itself.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { bundleForBrowser } from '../helpers/browser-bundle.js'

const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

async function pageModules(source: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'polite-fetch-page-'))
  const page = join(dir, 'page.js')
  writeFileSync(page, source)
  const bundle = await bundleForBrowser(page)
  return bundle.moduleIds.map((id) => id.replace(/\\/g, '/')).filter((id) => id.includes('/src/'))
}

describe('a createClient-only page', () => {
  it('ships no telemetry and no AATB', async () => {
    const modules = await pageModules(`import { createClient } from ${JSON.stringify(entry)}\nexport const c = createClient()\n`)
    expect(modules.some((id) => id.endsWith('/src/client/create-client.ts'))).toBe(true)
    expect(modules.filter((id) => /\/src\/telemetry\/|\/client-telemetry\.ts$|\/pacers\/aatb/.test(id))).toEqual([])
  })

  it('a page that imports aatb() gets its telemetry with it (control)', async () => {
    const modules = await pageModules(
      `import { aatb, createClient } from ${JSON.stringify(entry)}\nexport const c = createClient({ strategy: aatb(), telemetry: { url: '/t' } })\n`,
    )
    expect(modules.some((id) => id.endsWith('/src/telemetry/telemetry-driver.ts'))).toBe(true)
    expect(modules.some((id) => id.endsWith('/src/core/pacers/aatb.ts'))).toBe(true)
  })
})
