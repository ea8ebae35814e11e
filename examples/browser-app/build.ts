// Builds the browser example with Vite's JavaScript API: the page (index.html + TS),
// and the service worker twice from one entry — an IIFE bundle for a classic worker
// (`sw.js`, every browser with service workers) and an ES bundle for a module worker
// (`sw.mjs`). Run it directly (`npx tsx examples/browser-app/build.ts`) or import
// `buildBrowserApp` (the end-to-end test does).
import { resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Alias, type InlineConfig } from 'vite'

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, '../..')

/** The package's subpath exports, pointed at the sources (no `npm run build` needed). */
const alias: Alias[] = [
  { find: /^polite-fetch\/sw$/, replacement: resolve(repo, 'sw/index.ts') },
  { find: /^polite-fetch\/register$/, replacement: resolve(repo, 'src/register/index.ts') },
  { find: /^polite-fetch$/, replacement: resolve(repo, 'src/index.ts') },
]

export interface BuildOptions {
  /** Default `examples/browser-app/dist`. */
  outDir?: string
  /** Default true; false keeps the bundles readable. */
  minify?: boolean
}

function workerConfig(outDir: string, format: 'iife' | 'es', fileName: string, minify: boolean): InlineConfig {
  return {
    configFile: false,
    logLevel: 'warn',
    root: here,
    publicDir: false,
    resolve: { alias },
    // Library mode leaves process.env.NODE_ENV for a consumer to replace; a worker has no consumer.
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    build: {
      outDir,
      emptyOutDir: false,
      minify,
      sourcemap: true,
      lib: { entry: resolve(here, 'src/sw.ts'), formats: [format], name: 'politeFetchWorker', fileName: () => fileName },
    },
  }
}

export async function buildBrowserApp(options: BuildOptions = {}): Promise<{ outDir: string }> {
  const outDir = resolve(options.outDir ?? resolve(here, 'dist'))
  const minify = options.minify ?? true
  await build({
    configFile: false,
    logLevel: 'warn',
    root: here,
    base: './',
    publicDir: false,
    resolve: { alias },
    build: { outDir, emptyOutDir: true, minify, sourcemap: true },
  })
  await build(workerConfig(outDir, 'iife', 'sw.js', minify))
  await build(workerConfig(outDir, 'es', 'sw.mjs', minify))
  return { outDir }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outDir } = await buildBrowserApp()
  process.stdout.write(`built ${outDir}\n`)
}
