// How much polite-fetch adds to a browser app, brotli-compressed (quality 11):
//  - the main entry, everything it exports, bundled with Vite (library mode, browser
//    target, minified, dependencies included);
//  - a page that imports only `createClient` and uses it with the default strategy
//    (atb()), bundled the way an app bundles it: esbuild (bundle, minify, ESM, browser),
//    and with Vite for comparison. Its bytes are attributed to their source modules through
//    the source map (bench/size-attribution.ts): per module and per part (pacer, signal
//    reader, route splitting, client, …), minified bytes and the brotli bytes removing that
//    code would save, so what a page pays for can be read off.
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
import { ownersOf, type Share, shares, type SourceMap } from './size-attribution.js'
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

function brotliBytes(code: string | Uint8Array): number {
  const bytes = typeof code === 'string' ? Buffer.from(code, 'utf8') : Buffer.from(code)
  return brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length
}

function sizeOf(code: string | Uint8Array): Size {
  const bytes = typeof code === 'string' ? Buffer.from(code, 'utf8') : Buffer.from(code)
  return { minifiedBytes: bytes.length, brotliBytes: brotliBytes(bytes) }
}

/** The parts of the library a page pays for, by source path. */
const PARTS: Array<[part: string, test: (module: string) => boolean]> = [
  ['ATB pacer (src/core/pacers)', (module) => module.startsWith('src/core/pacers/')],
  ['signal reader (src/core/signals)', (module) => module.startsWith('src/core/signals/')],
  ['route splitting', (module) => module === 'src/core/route-split.ts' || module === 'src/client/route-splitter.ts'],
  ['client and limiter (src/client)', (module) => module.startsWith('src/client/')],
  ['core, the rest (src/core)', (module) => module.startsWith('src/core/')],
  ['telemetry (src/telemetry)', (module) => module.startsWith('src/telemetry/')],
  ['tabs and protocol', (module) => module.startsWith('src/tabs/') || module.startsWith('src/protocol/')],
  ['storage (src/storage)', (module) => module.startsWith('src/storage/')],
  ['dependencies (node_modules)', (module) => module.includes('node_modules/')],
]

function partOf(module: string): string {
  return PARTS.find(([, test]) => test(module))?.[0] ?? 'other'
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
      sourcemap: 'external',
      outfile: join(scratch, 'page.out.js'),
      logLevel: 'silent',
    })
    const output = esbuilt.outputFiles.find((file) => file.path.endsWith('.js'))
    const sourceMap = esbuilt.outputFiles.find((file) => file.path.endsWith('.js.map'))
    if (output === undefined || sourceMap === undefined) throw new Error('esbuild wrote nothing')
    const map = JSON.parse(sourceMap.text) as SourceMap
    const owners = ownersOf(output.text, map)
    const sourceName = (source: string | undefined): string =>
      source === undefined ? '(no source)' : relative(root, join(scratch, source))
    const moduleShares = shares(output.text, owners, map.sources, sourceName, brotliBytes)
    const partShares = shares(output.text, owners, map.sources, (source) => partOf(sourceName(source)), brotliBytes)
    const viaVite = await bundleForBrowser(page)

    const result = {
      mainEntry: { ...sizeOf(main.code), bundler: 'vite' },
      createClientPage: { ...sizeOf(output.contents), bundler: 'esbuild' },
      createClientPageVite: { ...sizeOf(viaVite.code), bundler: 'vite' },
      // Back-compatible names: the main entry's figures.
      ...sizeOf(main.code),
      // The page (esbuild) by part and by module: minified bytes, and the brotli bytes its removal saves.
      pageParts: partShares.map(({ name, ...size }) => ({ part: name, ...size })),
      pageModules: moduleShares.map(({ name, ...size }) => ({ module: name, ...size })),
    }
    const row = (name: string, size: Size, bundler: string): string =>
      `${name.padEnd(34)} ${bundler.padEnd(8)} ${String(size.minifiedBytes).padStart(9)} B  ${String(size.brotliBytes).padStart(7)} B`
    console.log(`${'bundle'.padEnd(34)} ${'bundler'.padEnd(8)}  minified     brotli`)
    console.log(row('main entry (src/index.ts, all)', result.mainEntry, 'vite'))
    console.log(row('page using only createClient()', result.createClientPage, 'esbuild'))
    console.log(row('page using only createClient()', result.createClientPageVite, 'vite'))
    const share = (size: Share | { minifiedBytes: number; brotliBytes: number }, name: string): string =>
      `  ${String(size.minifiedBytes).padStart(8)} B  ${String(size.brotliBytes).padStart(6)} B  ${name}`
    console.log('\nthe page (esbuild) by part: minified, and brotli saved without it')
    for (const part of result.pageParts) console.log(share(part, part.part))
    console.log('\nby module (the largest 20):')
    for (const module of result.pageModules.slice(0, 20)) console.log(share(module, module.module))
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
