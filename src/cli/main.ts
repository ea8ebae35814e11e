// `polite-fetch <command>`: each command lives in its own file and is loaded on demand,
// so `polite-fetch demo` never pays for the simulator or the telemetry server.
const commands: Record<string, () => Promise<{ run(argv: string[]): Promise<number> }>> = {
  demo: () => import('./demo.js'),
  simulate: () => import('./simulate.js'),
  'telemetry-server': () => import('./telemetry-server.js'),
}

const usage = `usage: polite-fetch <command> [options]

commands:
  demo               shared-quota demo: exponential backoff vs polite-fetch (--json for JSON)
  simulate           deterministic shared-quota simulator (--help for its options)
  telemetry-server   the AATB telemetry endpoint (--port 8787 [--redis redis://127.0.0.1:6379])
`

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(usage)
    return name ? 0 : 1
  }
  const load = commands[name]
  if (!load) {
    process.stderr.write(`polite-fetch: unknown command '${name}'\n\n${usage}`)
    return 1
  }
  const command = await load()
  return command.run(rest)
}

// Run directly (tsx src/cli/main.ts …), not when imported by bin/polite-fetch.js.
if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code },
    (error: unknown) => { console.error(error); process.exitCode = 1 },
  )
}
