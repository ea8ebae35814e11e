// The published declarations, as a consumer's TypeScript sees them: the package is built
// and packed (`npm pack`, so `files`, `exports` and `typesVersions` are what ships), the
// tarball unpacked into a scratch project's node_modules, and small consumer fixtures
// compiled against it with `skipLibCheck: false` under each setup a project may have:
// Node without the DOM lib, with it, moduleResolution nodenext / bundler / node10, and a
// service worker. Each fixture also holds `@ts-expect-error` lines, so a declaration that
// accepted anything (an `any` leaking out) fails the compile too.
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
const fixtures = join(import.meta.dirname, 'fixtures')

/** The runtime dependencies, @types/node and the optional peer a consumer would have installed, linked from ours. */
const LINKED = ['undici', 'ioredis', 'idb-keyval', 'workbox-window', '@types/node', '@opentelemetry/api']

interface Setup {
  name: string
  compilerOptions: Record<string, unknown>
  files: string[]
}

const NODE_FIXTURE = 'node-consumer.ts'
const BROWSER_FIXTURE = 'browser-consumer.ts'
const WORKER_FIXTURE = 'worker-consumer.ts'
const base = { target: 'ES2022', strict: true, skipLibCheck: false, noEmit: true }

const SETUPS: Setup[] = [
  {
    name: 'Node, no DOM lib (lib es2022 + @types/node), nodenext',
    compilerOptions: { ...base, module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'], types: ['node'] },
    files: [NODE_FIXTURE],
  },
  {
    name: 'Node with the DOM lib, nodenext',
    compilerOptions: { ...base, module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom', 'dom.iterable'], types: ['node'] },
    files: [NODE_FIXTURE, BROWSER_FIXTURE],
  },
  {
    name: 'bundler resolution, DOM lib and @types/node',
    compilerOptions: { ...base, module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom', 'dom.iterable'], types: ['node'] },
    files: [NODE_FIXTURE, BROWSER_FIXTURE],
  },
  {
    name: 'a page: bundler resolution, DOM lib, no Node types',
    compilerOptions: { ...base, module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom', 'dom.iterable'], types: [] },
    files: [BROWSER_FIXTURE],
  },
  {
    name: 'node10 resolution (CommonJS project): subpaths through typesVersions',
    compilerOptions: { ...base, module: 'commonjs', moduleResolution: 'node10', lib: ['es2022'], types: ['node'] },
    files: [NODE_FIXTURE],
  },
  {
    name: 'a service worker: WebWorker lib, no DOM, no Node types',
    compilerOptions: { ...base, module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'webworker'], types: [] },
    files: [WORKER_FIXTURE],
  },
]

let scratch: string
let consumer: string
/** Each setup's compile, started together once the package is in place (two at a time). */
const results = new Map<string, Promise<{ code: number; output: string }>>()

async function compile(setup: Setup, index: number): Promise<{ code: number; output: string }> {
  const project = join(consumer, `tsconfig.${index}.json`)
  writeFileSync(project, JSON.stringify({ compilerOptions: setup.compilerOptions, files: setup.files }))
  try {
    const { stdout, stderr } = await run(process.execPath, [tsc, '-p', project], { cwd: consumer, maxBuffer: 1 << 24 })
    return { code: 0, output: stdout + stderr }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` }
  }
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'polite-fetch-types-'))
  // The package as `npm pack` would make it from a fresh build (not the worktree's dist/).
  const pkg = join(scratch, 'pkg')
  mkdirSync(pkg)
  for (const name of ['package.json', 'README.md', 'LICENSE', 'bin']) cpSync(join(root, name), join(pkg, name), { recursive: true })
  await run(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(pkg, 'dist'), '--sourceMap', 'false'], {
    cwd: root,
  })
  await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', scratch], { cwd: pkg })
  const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'))
  if (tarball === undefined) throw new Error('npm pack wrote no tarball')

  consumer = join(scratch, 'consumer')
  const installed = join(consumer, 'node_modules', 'polite-fetch')
  mkdirSync(installed, { recursive: true })
  await run('tar', ['xzf', join(scratch, tarball), '-C', installed, '--strip-components=1'])
  for (const name of LINKED) {
    const link = join(consumer, 'node_modules', name)
    mkdirSync(resolve(link, '..'), { recursive: true })
    symlinkSync(join(root, 'node_modules', name), link, 'dir')
  }
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  for (const name of [NODE_FIXTURE, BROWSER_FIXTURE, WORKER_FIXTURE]) cpSync(join(fixtures, name), join(consumer, name))

  // Two compiles at a time: the machine has two cores, and each compile is one.
  let next = 0
  const lanes = [Promise.resolve(), Promise.resolve()]
  for (const setup of SETUPS) {
    const index = next++
    const lane = index % lanes.length
    const result = (lanes[lane] as Promise<unknown>).then(() => compile(setup, index))
    lanes[lane] = result.then(() => undefined)
    results.set(setup.name, result)
  }
}, 240_000)

afterAll(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
})

describe('the published declarations compile in a consumer project', () => {
  it.each(SETUPS.map((setup) => [setup.name, setup] as const))('%s', async (name) => {
    const result = await (results.get(name) as Promise<{ code: number; output: string }>)
    expect(result.output).toBe('')
    expect(result.code).toBe(0)
  }, 240_000)
})
