import { execFileSync, spawn, spawnSync } from 'node:child_process'
import type { ChildProcessByStdio, SpawnSyncReturns } from 'node:child_process'
import * as path from 'node:path'
import type { Readable } from 'node:stream'

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')
export const DIST = path.join(ROOT, 'dist')

let built = false
/** Bundles `dist/` from the sources once per test file, so tests never run a stale bundle. */
export function buildDist(): void {
  if (built) return
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' })
  built = true
}

/** `node dist/cli.js ARGS` in `cwd`, waited for. */
export function cliSync(
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv
): SpawnSyncReturns<Buffer> {
  return spawnSync(process.execPath, [path.join(DIST, 'cli.js'), ...args], {
    cwd,
    ...(env !== undefined ? { env } : {})
  })
}

/** `node dist/cli.js ARGS` in `cwd`, running (stdout and stderr piped). */
export function cliSpawn(
  args: string[],
  cwd: string
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, [path.join(DIST, 'cli.js'), ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe']
  })
}
