// Bundles an entry the way a browser app would (Vite library mode, browser
// conditions, minified, nothing external) and reports what went in: the code, the
// modules it contains, and every Node built-in something tried to import.
import { isBuiltin } from 'node:module'
import { build, type Plugin, type Rolldown } from 'vite'

export interface BrowserBundle {
  code: string
  /** Absolute ids of the modules in the bundle. */
  moduleIds: string[]
  /** Node built-ins (`node:fs`, `http`, …) that any bundled module imported. */
  builtinImports: string[]
}

export async function bundleForBrowser(entry: string, options: { minify?: boolean } = {}): Promise<BrowserBundle> {
  const builtinImports: string[] = []
  const watchBuiltins: Plugin = {
    name: 'polite-fetch:watch-builtins',
    enforce: 'pre',
    resolveId(source) {
      if (isBuiltin(source)) builtinImports.push(source)
      return null
    },
  }
  const result = await build({
    configFile: false,
    logLevel: 'silent',
    plugins: [watchBuiltins],
    build: {
      lib: { entry, formats: ['es'], fileName: 'bundle' },
      target: 'es2022',
      minify: options.minify ?? true,
      write: false,
      emptyOutDir: false,
      reportCompressedSize: false,
    },
  })
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[]
  let code = ''
  const moduleIds: string[] = []
  for (const output of outputs) {
    for (const item of output.output) {
      if (item.type !== 'chunk') continue
      code += item.code
      moduleIds.push(...item.moduleIds)
    }
  }
  return { code, moduleIds, builtinImports }
}
