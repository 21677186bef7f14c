// A minimal client of the Docker engine API: plain HTTP over the engine's socket (DOCKER_HOST or
// the default), for the action's post step, which must stay small and so cannot carry dockerode.
// It finds the engine the way dockerode (docker-modem) does, so both steps reach the same one.
// Paths are unversioned, like dockerode's: every engine answers them at its own API version, and
// the requests used (list and remove containers, networks, volumes) are the same from API 1.41 on.
import * as fs from 'node:fs'
import * as http from 'node:http'
import * as https from 'node:https'
import * as os from 'node:os'
import * as path from 'node:path'
import { InfrastructureError } from '../errors.js'
import type { Host } from '../host.js'

/** Where the engine listens: a unix socket (or Windows named pipe), or a TCP address. */
export type EngineEndpoint =
  | { socketPath: string }
  | {
      protocol: 'http:' | 'https:'
      host: string
      port: number
      tls?: { ca: Buffer; cert: Buffer; key: Buffer }
    }

/** The engine's address from DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, as docker-modem reads them. */
export function engineEndpoint(docker: Host['docker']): EngineEndpoint {
  const host = docker.host
  if (host === undefined || host === '') return { socketPath: defaultSocket() }
  if (host.startsWith('unix://')) return { socketPath: host.slice(7) || defaultSocket() }
  if (host.startsWith('npipe://')) return { socketPath: host.slice(8) || '//./pipe/docker_engine' }
  let url: URL
  try {
    url = new URL(host.includes('//') ? host : `tcp://${host}`)
  } catch {
    throw new InfrastructureError(
      `DOCKER_HOST "${host}" is not an engine address: give unix:///path/to/docker.sock or tcp://host:port`
    )
  }
  if (url.protocol === 'ssh:') {
    throw new InfrastructureError(
      'DOCKER_HOST is an ssh:// address, which the post step cannot reach: remove the run’s leftovers with `airlock cleanup --run-id <id>` on a machine that reaches the engine'
    )
  }
  const tlsWanted = docker.tlsVerify === '1' || url.port === '2376' || url.protocol === 'https:'
  const certs = docker.certPath
  const tls =
    certs !== undefined && certs !== ''
      ? {
          ca: fs.readFileSync(path.join(certs, 'ca.pem')),
          cert: fs.readFileSync(path.join(certs, 'cert.pem')),
          key: fs.readFileSync(path.join(certs, 'key.pem'))
        }
      : undefined
  return {
    protocol: tlsWanted || tls !== undefined ? 'https:' : 'http:',
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port !== '' ? Number(url.port) : tlsWanted ? 2376 : 2375,
    ...(tls ? { tls } : {})
  }
}

function defaultSocket(): string {
  if (process.platform === 'win32') return '//./pipe/docker_engine'
  const user = path.join(os.homedir(), '.docker', 'run', 'docker.sock')
  return fs.existsSync(user) ? user : '/var/run/docker.sock'
}

/** An answer of the engine other than 2xx: the status code travels with it (404, 409, 5xx). */
export class EngineHttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string
  ) {
    super(message)
    this.name = 'EngineHttpError'
  }
}

const MAX_BODY_BYTES = 64 * 1024 * 1024

/** One request; resolves to the parsed JSON answer (undefined for an empty one). */
export function engineRequest(
  endpoint: EngineEndpoint,
  method: 'GET' | 'DELETE',
  pathAndQuery: string,
  timeoutMs: number
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = {
      method,
      path: pathAndQuery,
      headers: { accept: 'application/json' },
      timeout: timeoutMs,
      ...('socketPath' in endpoint
        ? { socketPath: endpoint.socketPath }
        : {
            host: endpoint.host,
            port: endpoint.port,
            ...(endpoint.tls ?? {})
          })
    }
    const secure = !('socketPath' in endpoint) && endpoint.protocol === 'https:'
    const req = (secure ? https : http).request(options, (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (c: Buffer) => {
        size += c.length
        if (size > MAX_BODY_BYTES)
          req.destroy(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`))
        else chunks.push(c)
      })
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        const status = res.statusCode ?? 0
        if (status < 200 || status >= 300) {
          let detail = text.trim()
          try {
            const m = (JSON.parse(text) as { message?: unknown }).message
            if (typeof m === 'string') detail = m
          } catch {
            // not JSON: the text as it came
          }
          reject(
            new EngineHttpError(
              status,
              `${method} ${pathAndQuery}: HTTP ${status}: ${detail.slice(0, 500)}`
            )
          )
          return
        }
        try {
          resolve(text.trim() === '' ? undefined : JSON.parse(text))
        } catch {
          reject(new Error(`${method} ${pathAndQuery}: the engine's answer is not JSON`))
        }
      })
    })
    req.on('timeout', () =>
      req.destroy(new Error(`${method} ${pathAndQuery} timed out after ${timeoutMs} ms`))
    )
    req.on('error', reject)
    req.end()
  })
}
