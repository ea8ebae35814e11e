// The dependency rule of docs/architecture.md, read from the import statements:
// core is pure and stands alone; each shell imports downward, never sideways;
// each third-party runtime dependency has exactly one home.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve, dirname } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(import.meta.dirname, '../..')

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path))
    else if (name.endsWith('.ts')) out.push(path)
  }
  return out
}

const importPattern = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(importPattern)].map((m) => (m[1] ?? m[2]) as string)
}

/** Top-level area of a file: core, client, sim, sw, … */
function areaOf(file: string): string {
  const rel = relative(root, file).split('/')
  return rel[0] === 'src' ? (rel[1] ?? '') : (rel[0] ?? '')
}

const files = [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'sw'))]

// Which areas each area may import (besides itself).
const allowed: Record<string, string[]> = {
  core: [],
  client: ['core', 'telemetry'],
  storage: ['core'],
  telemetry: ['core'],
  node: ['core', 'client', 'storage', 'telemetry'],
  protocol: [],
  tabs: ['core', 'client', 'protocol'],
  register: ['core', 'client', 'storage', 'telemetry', 'protocol', 'tabs'],
  server: ['core', 'telemetry'],
  sim: ['core', 'client', 'telemetry', 'server'],
  cli: ['core', 'client', 'storage', 'telemetry', 'server', 'sim', 'node'],
  sw: ['core', 'client', 'storage', 'telemetry', 'protocol', 'tabs'],
  otel: ['core', 'client'],
  'index.ts': ['core', 'client', 'storage', 'telemetry'],
}

const homes: Record<string, string[]> = {
  'idb-keyval': ['storage'],
  'workbox-window': ['register'],
  undici: ['node'],
  ioredis: ['server'],
  '@opentelemetry/api': ['otel'],
}

describe('dependency rule', () => {
  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(5)
  })

  for (const file of files) {
    const area = areaOf(file)
    const name = relative(root, file)
    it(`${name} imports only what its area may`, () => {
      for (const spec of importsOf(file)) {
        if (spec.startsWith('.')) {
          const target = areaOf(resolve(dirname(file), spec))
          if (target === area) continue
          expect(allowed[area] ?? [], `${name} imports ${spec} (${target})`).toContain(target)
        } else {
          const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!
          if (area === 'core') expect.fail(`core must not import packages: ${name} imports ${spec}`)
          const home = homes[pkg]
          if (home) expect(home, `${name} imports ${pkg}`).toContain(area)
          if (spec.startsWith('node:') && ['client', 'storage', 'telemetry', 'register', 'sw', 'protocol', 'tabs', 'index.ts'].includes(area)) {
            // storage/file-store is the one Node-only store.
            if (!name.endsWith('file-store.ts')) expect.fail(`${name} imports the Node built-in ${spec}`)
          }
        }
      }
    })
  }
})
