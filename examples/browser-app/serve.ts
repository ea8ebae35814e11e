// Try the example by hand: builds it, starts a status-only quota server and the static site,
// and prints the URL to open. The quota (20 burst, 80/min run 15× faster: 20 per second, like
// the end-to-end test) is a gateway-sized one; the time scale reaches the page only for the
// exponential baseline's backoff, the worker's ATB runs its defaults.
//   npx tsx examples/browser-app/serve.ts [--port 5173] [--time-scale 15]
import { startQuotaServer } from '../../src/sim/quota-server.js'
import { buildBrowserApp } from './build.js'
import { serveStatic } from './static-server.js'

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name)
  const value = at === -1 ? undefined : Number(process.argv[at + 1])
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback
}

const timeScale = flag('--time-scale', 15)
const { outDir } = await buildBrowserApp()
const quota = await startQuotaServer({ feedback: 'status-only', quota: { capacity: 20, perMinute: 80 }, timeScale })
const site = await serveStatic(outDir, flag('--port', 5173))
const query = `api=${encodeURIComponent(quota.url)}&timeScale=${timeScale}`
process.stdout.write(
  `quota server ${quota.url} (80/min × ${timeScale})\n` +
    `with the worker:    ${site.url}/?mode=worker&${query}\n` +
    `without the worker: ${site.url}/?mode=page&${query}\n` +
    'open it in several tabs; Ctrl-C to stop\n',
)
process.on('SIGINT', () => {
  void Promise.all([quota.close(), site.close()]).then(() => process.exit(0))
})
