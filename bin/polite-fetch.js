#!/usr/bin/env node
// Runs the compiled CLI when the package is built (published installs), and the
// TypeScript source through tsx in a source checkout (npx polite-fetch … after npm install).
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const built = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url))
const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url))

if (existsSync(built)) {
  const { main } = await import(pathToFileURL(built).href)
  process.exitCode = await main(process.argv.slice(2))
} else {
  const { tsImport } = await import('tsx/esm/api')
  const { main } = await tsImport(pathToFileURL(source).href, import.meta.url)
  process.exitCode = await main(process.argv.slice(2))
}
