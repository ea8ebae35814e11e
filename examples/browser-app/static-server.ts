// A tiny static file server for the built example (node:http, 127.0.0.1 only).
// Service workers need a secure context; http://127.0.0.1 is one.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, resolve, sep } from 'node:path'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
}

export interface StaticServer {
  url: string
  close(): Promise<void>
}

export async function serveStatic(root: string, port = 0): Promise<StaticServer> {
  const base = resolve(root)
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
      const file = normalize(join(base, path.endsWith('/') ? `${path}index.html` : path))
      if (file !== base && !file.startsWith(base + sep)) {
        res.writeHead(403).end()
        return
      }
      const info = await stat(file)
      if (!info.isFile()) throw new Error('not a file')
      res.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'content-length': info.size,
        // Always revalidate, so a rebuilt worker script is picked up at once.
        'cache-control': 'no-cache',
      })
      createReadStream(file).pipe(res)
    } catch {
      if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain' })
      res.end('not found')
    }
  })
  await new Promise<void>((ok, fail) => {
    server.once('error', fail)
    server.listen(port, '127.0.0.1', () => ok())
  })
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok())
        server.closeAllConnections()
      }),
  }
}
