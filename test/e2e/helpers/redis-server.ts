// Starts and stops a throwaway `redis-server` (the Debian binary) on a free port on
// 127.0.0.1: no persistence, killed with the test. `kill()` simulates a crash
// (SIGKILL); `start()` again on the same port brings it back.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer, connect } from 'node:net'

export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server'

export function hasRedisServer(): boolean {
  return existsSync(REDIS_SERVER_BIN)
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

export interface RedisProcess {
  readonly port: number
  readonly url: string
  /** (Re)start on the same port; resolves once it accepts connections. */
  start(): Promise<void>
  /** SIGKILL: a crash, not a shutdown. Resolves once the process is gone. */
  kill(): Promise<void>
  stop(): Promise<void>
}

export async function startRedis(port?: number): Promise<RedisProcess> {
  const chosen = port ?? (await freePort())
  let child: ChildProcess | undefined

  async function start(): Promise<void> {
    child = spawn(REDIS_SERVER_BIN, ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    })
    for (let i = 0; i < 200; i++) { // bounded: 10 s at most
      if (await canConnect(chosen)) return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`redis-server did not start on port ${chosen}`)
  }

  async function kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const current = child
    child = undefined
    if (!current || current.exitCode !== null) return
    const exited = new Promise((resolve) => current.once('exit', resolve))
    current.kill(signal)
    await exited
  }

  await start()
  return { port: chosen, url: `redis://127.0.0.1:${chosen}`, start, kill: () => kill('SIGKILL'), stop: () => kill('SIGTERM') }
}
