import type { Runner } from '../runner.js'
import { createHash } from 'node:crypto'
import * as os from 'node:os'
import picomatch from 'picomatch'
import { git } from '../workspace/git.js'
import { readInside } from './safe-read.js'
import { displayPath, parseTreeListing } from '../git-listing.js'

/** Lockfiles of the common ecosystems, by file name (in any folder). */
export const LOCKFILE_PATTERNS = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
  'Pipfile.lock',
  'poetry.lock',
  'uv.lock',
  'pdm.lock',
  'requirements*.txt',
  'Cargo.lock',
  'go.sum',
  'go.work.sum',
  'Gemfile.lock',
  'composer.lock',
  'gradle.lockfile',
  '*.lockfile',
  'packages.lock.json',
  'Package.resolved',
  'pubspec.lock',
  'mix.lock',
  'flake.lock'
]

const isLockfile = picomatch(
  LOCKFILE_PATTERNS.map((p) => `**/${p}`),
  { dot: true }
)
const MAX_LOCKFILE_BYTES = 64 * 1024 * 1024

export interface DependencyFile {
  path: string
  /** null when the file could not be read (reason in `note`). */
  sha256: string | null
  bytes: number
  note?: string
}

/**
 * SHA-256 of every lockfile in the result tree. The list comes from the snapshot's git tree (so
 * it is exactly what the diff saw); each file is read with `readInside` (no symlink followed, no
 * FIFO opened, size-capped).
 */
export async function hashLockfiles(
  gitDir: string,
  tree: string,
  workspaceDir: string,
  /**
   * The files of `tree` (mode and raw path) when the caller has them, so no `git ls-tree` runs:
   * the snapshot that wrote the tree. Listed in git's order (the bytes of the whole path).
   */
  files?: readonly { mode: string; path: Buffer }[]
): Promise<DependencyFile[]> {
  const listed =
    files !== undefined
      ? [...files].sort((a, b) => Buffer.compare(a.path, b.path))
      : parseTreeListing(
          (await git(['ls-tree', '-r', '-z', '--full-tree', tree], { gitDir })).stdout
        )
  const out: DependencyFile[] = []
  for (const { mode, path: rawPath } of listed) {
    const shown = displayPath(rawPath)
    if (!isLockfile(shown)) continue
    if (mode === '120000') {
      out.push({ path: shown, sha256: null, bytes: 0, note: 'symlink (not followed)' })
      continue
    }
    if (shown !== rawPath.toString('utf8')) {
      out.push({ path: shown, sha256: null, bytes: 0, note: 'name is not UTF-8' })
      continue
    }
    const read = await readInside(workspaceDir, shown, MAX_LOCKFILE_BYTES)
    if (!read.ok) {
      out.push({ path: shown, sha256: null, bytes: 0, note: read.detail })
    } else if (read.truncated) {
      out.push({ path: shown, sha256: null, bytes: read.data.length, note: 'larger than 64 MiB' })
    } else {
      out.push({
        path: shown,
        sha256: createHash('sha256').update(read.data).digest('hex'),
        bytes: read.data.length
      })
    }
  }
  return out
}

export interface RunnerFacts {
  os: string
  osRelease: string
  arch: string
  node: string
  cpus: number
  memoryBytes: number
  docker: { version: string | null; apiVersion: string | null; os: string | null }
  /** The OCI runtime the containers ran with (from the plan, checked by preflight). */
  runtime: string
  /** GitHub-hosted or self-hosted runner facts, when running in Actions. */
  github: { runnerOs: string | null; runnerArch: string | null; imageOs: string | null } | null
}

/**
 * Facts about the host; `engine` is what the runtime says about itself (null when unknown),
 * `runner` the runner's facts the entry read (null off GitHub Actions).
 */
export function runnerFacts(
  engine: RunnerFacts['docker'],
  runtime: string,
  runner: Runner['github']
): RunnerFacts {
  return {
    os: os.platform(),
    osRelease: os.release(),
    arch: os.arch(),
    node: process.version,
    cpus: os.cpus().length,
    memoryBytes: os.totalmem(),
    docker: { ...engine },
    runtime,
    github:
      runner === null
        ? null
        : { runnerOs: runner.os, runnerArch: runner.arch, imageOs: runner.imageOs }
  }
}

/**
 * What the agent may report about its own use of a model: `usage.json` written to the agent
 * output folder (`$AIRLOCK_OUT_DIR`, /airlock/out). Everything is optional; unknown keys are
 * ignored; the values are the agent's claims and are recorded as such.
 */
export interface Usage {
  model?: string
  inputTokens?: number
  outputTokens?: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  costUsd?: number
}

export interface UsageRead {
  status: 'ok' | 'missing' | 'malformed' | 'refused'
  detail?: string
  usage: Usage | null
}

export const USAGE_FILE = 'usage.json'
const MAX_USAGE_BYTES = 64 * 1024

export async function readUsage(outDir: string): Promise<UsageRead> {
  const read = await readInside(outDir, USAGE_FILE, MAX_USAGE_BYTES)
  if (!read.ok) {
    return {
      status: read.reason === 'missing' ? 'missing' : 'refused',
      ...(read.reason === 'missing' ? {} : { detail: read.detail }),
      usage: null
    }
  }
  if (read.truncated) return { status: 'malformed', detail: 'larger than 64 KiB', usage: null }
  return parseUsage(read.data.toString('utf8'))
}

const COUNTS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const

export function parseUsage(text: string): UsageRead {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    return { status: 'malformed', detail: 'not valid JSON', usage: null }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { status: 'malformed', detail: 'not a JSON object', usage: null }
  const d = doc as Record<string, unknown>
  const usage: Usage = {}
  for (const k of COUNTS) {
    const v = d[k]
    if (v === undefined) continue
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      return { status: 'malformed', detail: `${k} must be a whole number ≥ 0`, usage: null }
    usage[k] = v
  }
  if (d.costUsd !== undefined) {
    if (typeof d.costUsd !== 'number' || !Number.isFinite(d.costUsd) || d.costUsd < 0)
      return { status: 'malformed', detail: 'costUsd must be a number ≥ 0', usage: null }
    usage.costUsd = d.costUsd
  }
  if (d.model !== undefined) {
    if (typeof d.model !== 'string' || d.model.length > 200)
      return {
        status: 'malformed',
        detail: 'model must be a string (≤ 200 characters)',
        usage: null
      }
    usage.model = d.model
  }
  return { status: 'ok', usage }
}
