// The host's facts, read once at the edge like the runner's facts and the inputs: the variables of
// the process that the container engine's client, the build lock, the cache and the child
// processes (git, mount) act on. The entry builds this table; later code receives it (or a value
// of it), never the environment.
import * as os from 'node:os'
import * as path from 'node:path'

export interface Host {
  /** DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH: the engine's address, as docker-modem reads them. */
  docker: { host?: string; tlsVerify?: string; certPath?: string }
  /** DOCKER_BUILDKIT, as the docker CLI reads it ('0' turns BuildKit off). */
  buildkit?: string
  /** AIRLOCK_ENGINE_TIMEOUT_MS: the deadline of one ordinary engine request (default 60 s). */
  engineTimeoutMs: number
  /** AIRLOCK_LOCK_DIR: the folder of the build locks (default <tmp>/airlock-locks). */
  lockDir: string
  /** $XDG_CACHE_HOME/airlock (default ~/.cache/airlock): the machine's cache folder. */
  cacheRoot: string
  /** PATH, handed to the child processes (git, mkfs, mount). */
  path?: string
  /** The whole environment the tools (mkfs, mount, sudo) are started with. */
  toolEnv: Readonly<Record<string, string>>
}

const DEFAULT_ENGINE_TIMEOUT_MS = 60_000

function timeoutOf(value: string | undefined): number {
  const v = Number(value)
  return Number.isFinite(v) && v > 0 && v <= 2 ** 31 - 1 ? v : DEFAULT_ENGINE_TIMEOUT_MS
}

function cacheRootOf(xdg: string | undefined): string {
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache')
  return path.join(base, 'airlock')
}

function defined(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)
  )
}

/** The host's facts from its variables (pure). */
export function readHost(env: NodeJS.ProcessEnv): Host {
  return {
    docker: {
      ...(env.DOCKER_HOST !== undefined ? { host: env.DOCKER_HOST } : {}),
      ...(env.DOCKER_TLS_VERIFY !== undefined ? { tlsVerify: env.DOCKER_TLS_VERIFY } : {}),
      ...(env.DOCKER_CERT_PATH !== undefined ? { certPath: env.DOCKER_CERT_PATH } : {})
    },
    ...(env.DOCKER_BUILDKIT !== undefined ? { buildkit: env.DOCKER_BUILDKIT } : {}),
    engineTimeoutMs: timeoutOf(env.AIRLOCK_ENGINE_TIMEOUT_MS),
    lockDir: env.AIRLOCK_LOCK_DIR ?? path.join(os.tmpdir(), 'airlock-locks'),
    cacheRoot: cacheRootOf(env.XDG_CACHE_HOME),
    ...(env.PATH !== undefined ? { path: env.PATH } : {}),
    toolEnv: defined(env)
  }
}
