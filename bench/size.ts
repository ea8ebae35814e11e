// How much polite-fetch adds to a browser app: the main entry bundled with Vite
// (library mode, browser target, minified, dependencies included) and brotli-compressed.
//
//   npm run bench:size            (tsx bench/size.ts)
//
// Prints the figures and writes bench/results/size.json { minifiedBytes, brotliBytes }.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants } from 'node:zlib'
import { bundleForBrowser } from '../test/helpers/browser-bundle.js'

const here = dirname(fileURLToPath(import.meta.url))

async function main(): Promise<void> {
  const entry = join(here, '..', 'src', 'index.ts')
  const bundle = await bundleForBrowser(entry)
  if (bundle.builtinImports.length > 0) throw new Error(`Node built-ins in the browser bundle: ${bundle.builtinImports.join(', ')}`)
  const bytes = Buffer.from(bundle.code, 'utf8')
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
  const result = { minifiedBytes: bytes.length, brotliBytes: brotli.length }
  const modules = bundle.moduleIds.filter((id) => !id.startsWith('\0')).length
  console.log('entry               minified    brotli   modules')
  console.log(
    `src/index.ts   ${String(result.minifiedBytes).padStart(10)} B  ${String(result.brotliBytes).padStart(7)} B   ${modules}`,
  )
  const out = join(here, 'results', 'size.json')
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`)
  console.log(`wrote ${out}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
