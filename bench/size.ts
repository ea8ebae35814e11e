// How much polite-fetch adds to a browser app, brotli-compressed (quality 11):
//  - the main entry, everything it exports, bundled with Vite (library mode, browser
//    target, minified, dependencies included);
//  - a page that imports only `createClient` and uses it with the default strategy
//    (atb()), bundled the way an app bundles it: esbuild (bundle, minify, ESM, browser),
//    and with Vite for comparison. Its modules are listed by bytes in the output (the
//    esbuild metafile), so what a page pays for can be read off.
//
//   npm run bench:size            (tsx bench/size.ts)
//
// Prints the figures and writes bench/results/size.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants } from 'node:zlib'
import { build } from 'esbuild'
import { bundleForBrowser } from '../test/helpers/browser-bundle.js'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')

/** What a page that only paces its fetches writes. */
const PAGE = (entry: string): string => `import { createClient } from ${JSON.stringify(entry)}
const client = createClient()
export const load = (url) => client.fetch(url)
`

interface Size {
  minifiedBytes: number
  brotliBytes: number
}

function sizeOf(code: string | Uint8Array): Size {
  const bytes = typeof code === 'string' ? Buffer.from(code, 'utf8') : Buffer.from(code)
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
  return { minifiedBytes: bytes.length, brotliBytes: brotli.length }
}

async function main(): Promise<void> {
  const entry = join(root, 'src', 'index.ts')
  const main = await bundleForBrowser(entry)
  if (main.builtinImports.length > 0) throw new Error(`Node built-ins in the browser bundle: ${main.builtinImports.join(', ')}`)

  const scratch = mkdtempSync(join(tmpdir(), 'polite-fetch-size-'))
  try {
    const page = join(scratch, 'page.js')
    writeFileSync(page, PAGE(entry))
    const esbuilt = await build({
      entryPoints: [page],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      metafile: true,
      logLevel: 'silent',
    })
    const output = esbuilt.outputFiles[0]
    if (output === undefined) throw new Error('esbuild wrote nothing')
    const viaVite = await bundleForBrowser(page)

    const result = {
      mainEntry: { ...sizeOf(main.code), bundler: 'vite' },
      createClientPage: { ...sizeOf(output.contents), bundler: 'esbuild' },
      createClientPageVite: { ...sizeOf(viaVite.code), bundler: 'vite' },
      // Back-compatible names: the main entry's figures.
      ...sizeOf(main.code),
      pageModules: Object.entries(Object.values(esbuilt.metafile.outputs)[0]?.inputs ?? {})
        .map(([path, input]) => ({ module: relative(root, path), bytes: input.bytesInOutput }))
        .filter((module) => module.bytes > 0)
        .sort((a, b) => b.bytes - a.bytes),
    }
    const row = (name: string, size: Size, bundler: string): string =>
      `${name.padEnd(34)} ${bundler.padEnd(8)} ${String(size.minifiedBytes).padStart(9)} B  ${String(size.brotliBytes).padStart(7)} B`
    console.log(`${'bundle'.padEnd(34)} ${'bundler'.padEnd(8)}  minified     brotli`)
    console.log(row('main entry (src/index.ts, all)', result.mainEntry, 'vite'))
    console.log(row('page using only createClient()', result.createClientPage, 'esbuild'))
    console.log(row('page using only createClient()', result.createClientPageVite, 'vite'))
    console.log('\nthe page (esbuild), minified bytes per module:')
    for (const module of result.pageModules.slice(0, 15)) console.log(`  ${String(module.bytes).padStart(6)}  ${module.module}`)
    const out = join(here, 'results', 'size.json')
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`)
    console.log(`wrote ${out}`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
