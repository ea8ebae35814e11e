#!/usr/bin/env node
// In a source checkout (npx polite-fetch … after npm install) runs the TypeScript
// source through tsx, so a stale dist/ never shadows the code being edited; a published
// install ships only dist/ and bin/, and runs the compiled CLI.
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const built = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url))
const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url))

if (existsSync(source)) {
  const { tsImport } = await import('tsx/esm/api')
  const { main } = await tsImport(pathToFileURL(source).href, import.meta.url)
  process.exitCode = await main(process.argv.slice(2))
} else {
  const { main } = await import(pathToFileURL(built).href)
  process.exitCode = await main(process.argv.slice(2))
}
