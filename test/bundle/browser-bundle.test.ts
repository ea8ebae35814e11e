import { mkdtempSync, writeFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { bundleForBrowser } from '../helpers/browser-bundle.js'

const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

describe('the main entry in a browser bundle', () => {
  it('pulls in no Node built-in and no runtime dependency meant for other entries', async () => {
    const bundle = await bundleForBrowser(entry)
    expect(bundle.builtinImports).toEqual([])
    expect(bundle.moduleIds.filter((id) => isBuiltin(id) || id.includes('__vite-browser-external'))).toEqual([])
    expect(bundle.code).not.toMatch(/from\s*["'](node:|fs|http|https|net|zlib|crypto)["']/)
    // The page-side entry must not drag in the Node, server or simulator parts.
    const ours = bundle.moduleIds.map((id) => id.replace(/\\/g, '/')).filter((id) => id.includes('/src/'))
    expect(ours.filter((id) => /\/src\/(node|server|sim|cli)\//.test(id))).toEqual([])
    expect(bundle.moduleIds.filter((id) => /node_modules\/(undici|ioredis)\//.test(id))).toEqual([])
    expect(bundle.code).toContain('x-polite-fetch')
  })

  it('the check itself catches a Node built-in (control)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polite-fetch-bundle-'))
    const fixture = join(dir, 'uses-node.ts')
    writeFileSync(fixture, "import { gzipSync } from 'node:zlib'\nimport http from 'http'\nexport const f = () => [gzipSync, http]\n")
    const bundle = await bundleForBrowser(fixture)
    expect(bundle.builtinImports.sort()).toEqual(['http', 'node:zlib'])
  })
})
