// The server side of bench/telemetry-instructions.ts: bench:telemetry's memory-store server
// from one build (argv[2] = its dist/src/server directory), on a free port printed to stdout.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

// 'bare': bench:telemetry's calibration server (node:http reading the body and answering 200 {}).
const server = process.argv[2] === 'bare' ? await bare() : await telemetry(process.argv[2])

async function telemetry(dir) {
  const base = pathToFileURL(`${resolve(dir)}/`).href
  const { serve } = await import(`${base}serve.js`)
  const { createMemoryStore } = await import(`${base}memory-store.js`)
  // Under valgrind a request waits in the pipeline ~50x longer than natively: the default 5 s
  // and 10 s timeouts would cut the load's connections, so they are raised here (both builds alike).
  return serve({
    port: 0, headersTimeoutMs: 600_000, requestTimeoutMs: 600_000, keepAliveTimeoutMs: 600_000,
    options: {
      store: createMemoryStore(), auth: { tokens: { 'bench-token': { tenant: 'bench', scopes: '*' } } }, rateLimit: false,
      quotas: { 'https://api-0.example.com': { perMinute: 80 } },
    },
  })
}

async function bare() {
  const { createServer } = await import('node:http')
  const server = createServer({ headersTimeout: 600_000, requestTimeout: 600_000, keepAliveTimeout: 600_000 }, (req, res) => {
    req.resume()
    req.on('end', () => { res.writeHead(200, { 'content-length': 2 }); res.end('{}') })
  })
  await new Promise((done) => server.listen(0, '127.0.0.1', done))
  return { port: server.address().port, close: () => new Promise((done) => { server.close(() => done()); server.closeAllConnections() }) }
}

process.stdout.write(`${server.port}\n`)
// SIGINT ends the process normally, so `node --cpu-prof` writes its profile.
process.once('SIGINT', () => { server.close().then(() => process.exit(0)) })
