import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/index.js'
import { sharedAbortController } from '../../src/client/shared-abort-controller.js'
import { startLocalServer, type LocalServer } from '../helpers/local-server.js'

let server: LocalServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('sharedAbortController', () => {
  it('lets more than 10 listeners follow its signal without a Node warning', () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error): void => void warnings.push(warning)
    process.on('warning', onWarning)
    const controller = sharedAbortController()
    const listeners = Array.from({ length: 20 }, () => () => {})
    for (const listener of listeners) controller.signal.addEventListener('abort', listener)
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      process.off('warning', onWarning)
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
    })
  })

  it('12 concurrent calls with Request bodies (what ky and axios send) raise no listener warning', async () => {
    server = await startLocalServer()
    const warnings: Error[] = []
    const onWarning = (warning: Error): void => void warnings.push(warning)
    process.on('warning', onWarning)
    const client = createClient()
    try {
      const bodies = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          client
            .fetch(new Request(`${server!.origin}/items`, { method: 'POST', body: JSON.stringify({ i }) }))
            .then((res) => res.text()),
        ),
      )
      await new Promise<void>((resolve) => setImmediate(resolve))
      expect(bodies).toHaveLength(12)
      expect(server.requests.map((r) => JSON.parse(r.body).i).sort((a, b) => a - b)).toEqual([...Array(12).keys()])
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
    } finally {
      process.off('warning', onWarning)
      client.close()
    }
  })
})
