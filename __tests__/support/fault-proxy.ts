import * as fs from 'node:fs'
import * as http from 'node:http'
import type { Socket } from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'

/**
 * A local proxy in front of the real Docker daemon's socket that counts every API request and
 * can fail the N-th one: `drop` closes the client's connection as the request arrives (the
 * daemon never sees it), `drop-response` forwards it and closes the connection once the
 * daemon's answer has begun (EOF in the middle of a wait, attach or build stream), `stall`
 * never answers. Every later request passes again (the engine is back).
 */

export type FaultKind = 'drop' | 'drop-response' | 'stall'

export interface Fault {
  at: number
  kind: FaultKind
}

export interface FaultProxy {
  socketPath: string
  /** Requests seen so far, as "METHOD /path" (API version prefix and query removed). */
  requests: string[]
  /** The request the fault hit, once it did. */
  hit: string | undefined
  /**
   * Called with every request as it arrives (method and full URL, query included), before it is
   * forwarded: a test decides there when the engine goes away.
   */
  onRequest?: (method: string, url: string) => void
  /**
   * The engine goes away: every open connection (attach, wait, stats streams included) is cut
   * and the socket file disappears, so new connections fail as with a stopped daemon.
   */
  kill(): Promise<void>
  /** The engine is back on the same socket. */
  revive(): Promise<void>
  /** Whether the engine is away (between kill and revive). */
  readonly dead: boolean
  close(): Promise<void>
}

const DOCKER_SOCKET = '/var/run/docker.sock'

function describe(req: http.IncomingMessage): string {
  const url = (req.url ?? '').split('?')[0].replace(/^\/v[0-9.]+/, '')
  // Container and image IDs vary from run to run: keep the shape of the path.
  return `${req.method} ${url.replace(/[0-9a-f]{64}/g, '<id>')}`
}

export async function startFaultProxy(fault?: Fault): Promise<FaultProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-faultproxy-'))
  const socketPath = path.join(dir, 'docker.sock')
  const sockets = new Set<Socket>()
  const upstreams = new Set<http.ClientRequest>()
  let dead = false
  const cutAll = (): void => {
    for (const u of upstreams) u.destroy()
    for (const s of sockets) s.destroy()
  }
  const state: FaultProxy = {
    socketPath,
    requests: [],
    hit: undefined,
    get dead() {
      return dead
    },
    kill: async () => {
      if (dead) return
      dead = true
      cutAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      fs.rmSync(socketPath, { force: true })
    },
    revive: async () => {
      if (!dead) return
      await new Promise<void>((resolve) => server.listen(socketPath, resolve))
      dead = false
    },
    close: async () => {
      cutAll()
      if (!dead) await new Promise<void>((resolve) => server.close(() => resolve()))
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  const server = http.createServer((req, res) => {
    state.onRequest?.(req.method ?? '', req.url ?? '')
    if (dead) {
      req.socket.destroy()
      return
    }
    state.requests.push(describe(req))
    const n = state.requests.length
    const faulty = fault !== undefined && fault.at === n
    if (faulty) state.hit = describe(req)
    if (faulty && fault.kind === 'drop') {
      req.socket.destroy()
      return
    }
    if (faulty && fault.kind === 'stall') {
      // Reads the request and never answers; the client's connection stays open.
      req.resume()
      return
    }
    const upstream = http.request(
      {
        socketPath: DOCKER_SOCKET,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: false
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        res.flushHeaders()
        if (faulty && fault.kind === 'drop-response') {
          up.destroy()
          req.socket.destroy()
          return
        }
        up.pipe(res)
      }
    )
    upstreams.add(upstream)
    upstream.on('close', () => upstreams.delete(upstream))
    upstream.on('error', () => req.socket.destroy())
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  server.keepAliveTimeout = 0
  server.requestTimeout = 0
  server.headersTimeout = 0
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  return state
}
