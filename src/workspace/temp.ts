import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import type { Runner } from '../runner.js'
import { unmountUnder } from './bounded.js'
import type { ToolEnv } from './bounded.js'

/**
 * A run's temporary folder (workspace copy, task file, agent output): `airlock-<run id>-XXXXXX`
 * under the temp root, holding a marker file with the run id. Cleanup finds a run's folders by
 * name and marker, and removes only real folders owned by this user: never through a symlink.
 */

export const TEMP_MARKER = '.airlock-run'

/** The runner's temporary folder (RUNNER_TEMP, from the runner facts), else the OS's. */
export function defaultTempRoot(runner: Pick<Runner, 'temp'> = {}): string {
  return runner.temp ?? os.tmpdir()
}

export async function makeRunTemp(root: string, runId: string): Promise<string> {
  const dir = await fs.promises.mkdtemp(path.join(root, `airlock-${runId}-`))
  await fs.promises.writeFile(path.join(dir, TEMP_MARKER), runId, { mode: 0o444 })
  return dir
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Folders of `runId` under `root`: named for it, real folders, ours, with its marker. */
export async function runTemps(root: string, runId: string): Promise<string[]> {
  const name = new RegExp(`^airlock-${escapeRegExp(runId)}-[A-Za-z0-9]{6}$`)
  const uid = process.getuid?.()
  const found: string[] = []
  for (const entry of await fs.promises.readdir(root).catch(() => [] as string[])) {
    if (!name.test(entry)) continue
    const dir = path.join(root, entry)
    const st = await fs.promises.lstat(dir).catch(() => undefined)
    if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid)) continue
    const marker = path.join(dir, TEMP_MARKER)
    const m = await fs.promises.lstat(marker).catch(() => undefined)
    if (!m?.isFile() || m.size > 256) continue
    if ((await fs.promises.readFile(marker, 'utf8').catch(() => '')) !== runId) continue
    found.push(dir)
  }
  return found
}

/**
 * Removes the run's temporary folders (symlinks inside are removed, never followed); `env`: the
 * host's environment for umount.
 */
export async function removeRunTemps(root: string, runId: string, env: ToolEnv): Promise<number> {
  let removed = 0
  for (const dir of await runTemps(root, runId)) {
    // A run that died with its workspace-size filesystem mounted: unmount it first.
    await unmountUnder(dir, env)
    // Folders the agent made unwritable would stop the removal: give them write access back.
    await makeWritable(dir)
    await fs.promises.rm(dir, { recursive: true, force: true })
    removed++
  }
  return removed
}

async function makeWritable(dir: string): Promise<void> {
  const walk = async (d: string): Promise<void> => {
    await fs.promises.chmod(d, 0o700).catch(() => undefined)
    const entries = await fs.promises.readdir(d, { withFileTypes: true }).catch(() => [])
    for (const e of entries) if (e.isDirectory()) await walk(path.join(d, e.name))
  }
  await walk(dir)
}
