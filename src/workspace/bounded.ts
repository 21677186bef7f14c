import { execFile } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { promisify } from 'node:util'
import { ConfigurationError, errorMessage } from '../errors.js'
import { INPUT } from '../input-names.js'

/**
 * The run's scratch filesystem: every folder a sandbox phase can write (the workspace, the
 * baseline and re-run copies, the agent's output folder) lives on one ext4 filesystem of
 * `workspace-size` bytes, in a sparse image file inside the run's temporary folder and
 * loop-mounted there. The kernel enforces the limit: a write past it fails with ENOSPC inside
 * the container, and the runner's disk pays at most the limit.
 *
 * Mounting needs root: the process is root (CI, containers) or has passwordless `sudo` (GitHub's
 * hosted runners). Without either the limit cannot be enforced: a `workspace-size` that was asked
 * for is then a ConfigurationError; the default degrades to an unbounded folder, with a warning
 * and `enforced: false` in the report.
 */

const run = promisify(execFile)

/** The image file and the mount point inside the run's temporary folder. */
export const SCRATCH_IMAGE = 'scratch.img'
export const SCRATCH_DIR = 'scratch'

/** Fewer free bytes than this after a phase: the phase filled the filesystem. */
const FULL_BELOW = 1024 * 1024

export interface WorkspaceBound {
  sizeBytes: number
  /** Set explicitly (input or policy file): refuse to run when it cannot be enforced. */
  required: boolean
}

export interface Scratch {
  /** Parent of the folders the sandbox writes. */
  dir: string
  sizeBytes: number
  /** The kernel enforces the limit (false: a plain folder on the runner's disk). */
  enforced: boolean
  /** True when the filesystem is (nearly) full: something wrote up to the limit. */
  full(): Promise<boolean>
  /** Unmounts and removes the image; never throws (a failure is returned as text). */
  release(): Promise<string | undefined>
}

/** The environment the tools (mkfs, mount, sudo) are started with: the host's (`Host.toolEnv`). */
export type ToolEnv = Readonly<Record<string, string>>

/** How this process runs privileged commands: directly as root, through `sudo -n`, or not at all. */
export async function privilegePrefix(env: ToolEnv): Promise<string[] | null> {
  if (process.getuid?.() === 0) return []
  try {
    await run('sudo', ['-n', 'true'], { timeout: 5000, env: toolEnv(env) })
    return ['sudo', '-n']
  } catch {
    return null
  }
}

function toolEnv(env: ToolEnv): NodeJS.ProcessEnv {
  // mkfs and mount live in sbin, which an unprivileged user's PATH may not hold.
  return { ...env, PATH: `${env.PATH ?? ''}:/usr/sbin:/sbin:/usr/bin:/bin` }
}

async function privileged(prefix: string[], args: string[], env: ToolEnv): Promise<void> {
  const [cmd, ...rest] = [...prefix, ...args]
  await run(cmd, rest, { timeout: 30_000, env: toolEnv(env) })
}

export function formatSize(bytes: number): string {
  const units: [number, string][] = [
    [1024 ** 4, 'TiB'],
    [1024 ** 3, 'GiB'],
    [1024 ** 2, 'MiB']
  ]
  for (const [n, unit] of units)
    if (bytes >= n) return `${Number((bytes / n).toFixed(2)).toString()} ${unit}`
  return `${bytes} bytes`
}

/**
 * Makes the run's scratch filesystem of `bound.sizeBytes` under `runTemp` (see the module
 * comment). `warn` receives the reason when the limit cannot be enforced and was not required.
 */
export async function makeScratch(
  runTemp: string,
  bound: WorkspaceBound,
  warn: (line: string) => void,
  env: ToolEnv,
  /** How mount/umount run privileged (tests replace it); null: they cannot. */
  privilege: () => Promise<string[] | null> = () => privilegePrefix(env)
): Promise<Scratch> {
  const dir = path.join(runTemp, SCRATCH_DIR)
  const image = path.join(runTemp, SCRATCH_IMAGE)
  await fs.promises.mkdir(dir, { mode: 0o755 })
  const prefix = await privilege()
  let failure: string | undefined
  if (prefix === null) {
    failure = 'mounting a size-limited filesystem needs root or passwordless sudo'
  } else {
    try {
      await mountImage(prefix, image, dir, bound.sizeBytes, env)
      return mounted(prefix, dir, image, bound.sizeBytes, env)
    } catch (error) {
      failure = errorMessage(error)
      if ((await mountsUnder(dir)).length > 0)
        await unmount(prefix, dir, env).catch(() => undefined)
      await fs.promises.rm(image, { force: true }).catch(() => undefined)
    }
  }
  const size = formatSize(bound.sizeBytes)
  if (bound.required) {
    throw new ConfigurationError(
      INPUT.workspaceSize,
      `${size} cannot be enforced on this runner (${failure}); run as root or with passwordless sudo (GitHub-hosted runners have it), or remove workspace-size to accept an unbounded workspace`
    )
  }
  warn(
    `workspace-size: the workspace is NOT bounded (${failure}); the sandbox can fill this runner's disk`
  )
  return {
    dir,
    sizeBytes: bound.sizeBytes,
    enforced: false,
    full: () => Promise.resolve(false),
    release: () => Promise.resolve(undefined)
  }
}

async function mountImage(
  prefix: string[],
  image: string,
  dir: string,
  sizeBytes: number,
  env: ToolEnv
): Promise<void> {
  // A sparse file: the disk pays for what is written, up to the size.
  const fh = await fs.promises.open(image, 'wx', 0o600)
  try {
    await fh.truncate(sizeBytes)
  } finally {
    await fh.close()
  }
  const uid = process.getuid?.() ?? 0
  const gid = process.getgid?.() ?? 0
  // No journal (a throwaway filesystem needs no crash recovery), no reserved blocks (the limit is
  // all usable), owned by this process like a folder it made.
  await run(
    'mkfs.ext4',
    ['-q', '-F', '-m', '0', '-O', '^has_journal', '-E', `root_owner=${uid}:${gid}`, image],
    { timeout: 60_000, env: toolEnv(env) }
  )
  await privileged(
    prefix,
    ['mount', '-t', 'ext4', '-o', 'loop,nosuid,nodev,noatime', image, dir],
    env
  )
  // Proof that the folder is the mounted filesystem, not the folder under it.
  const [inner, outer] = await Promise.all([
    fs.promises.lstat(dir),
    fs.promises.lstat(path.dirname(dir))
  ])
  if (inner.dev === outer.dev) throw new Error(`${dir} is not a mount point after mount`)
  const st = await fs.promises.statfs(dir)
  if (st.blocks * st.bsize > sizeBytes)
    throw new Error(`the mounted filesystem holds ${st.blocks * st.bsize} bytes, over the limit`)
  // mkfs's lost+found (root's, empty) would show up in the workspace's parent only; not needed.
  await fs.promises.rmdir(path.join(dir, 'lost+found')).catch(() => undefined)
}

function mounted(
  prefix: string[],
  dir: string,
  image: string,
  sizeBytes: number,
  env: ToolEnv
): Scratch {
  let released = false
  return {
    dir,
    sizeBytes,
    enforced: true,
    full: async () => {
      const st = await fs.promises.statfs(dir)
      return st.bavail * st.bsize < FULL_BELOW
    },
    release: async () => {
      if (released) return undefined
      released = true
      try {
        await unmount(prefix, dir, env)
        await fs.promises.rm(image, { force: true })
        return undefined
      } catch (error) {
        return `could not unmount the workspace filesystem at ${dir}: ${errorMessage(error)}`
      }
    }
  }
}

/** Unmounts `dir`, retrying while it is busy, then lazily (it goes once the last user leaves). */
export async function unmount(prefix: string[], dir: string, env: ToolEnv): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await privileged(prefix, ['umount', dir], env)
      return
    } catch {
      await new Promise((r) => setTimeout(r, 200 * (attempt + 1)))
    }
  }
  await privileged(prefix, ['umount', '-l', dir], env)
}

/** Mount points at or below `dir`, deepest first (from /proc/self/mountinfo). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const info = await fs.promises.readFile('/proc/self/mountinfo', 'utf8').catch(() => '')
  const found: string[] = []
  for (const line of info.split('\n')) {
    const field = line.split(' ')[4]
    if (field === undefined) continue
    // Spaces, tabs, newlines and backslashes are octal escapes in mountinfo.
    const p = field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))
    if (p === dir || p.startsWith(dir + '/')) found.push(p)
  }
  return found.sort((a, b) => b.length - a.length)
}

/** Unmounts whatever is mounted below a run's temporary folder (cleanup of a run that died). */
export async function unmountUnder(dir: string, env: ToolEnv): Promise<void> {
  const mounts = await mountsUnder(dir)
  if (mounts.length === 0) return
  const prefix = await privilegePrefix(env)
  if (prefix === null) throw new Error(`${dir} holds mounts and this user cannot unmount them`)
  for (const m of mounts) await unmount(prefix, m, env)
}
