// The dependency tree an install resolved, read from what it left in the workspace: npm's hidden
// lockfile (node_modules/.package-lock.json) and Python's installed distributions (the
// `*.dist-info` folders of a virtualenv's site-packages or a `--target` folder). The evidence of
// what was installed when no lockfile is committed. The install container wrote all of it: no
// symlink is followed, no FIFO opened, every read and the search itself are bounded.
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { readInside } from './safe-read.js'
import { isPlainObject } from '../plain-object.js'

export const NPM_HIDDEN_LOCKFILE = 'node_modules/.package-lock.json'
const MAX_HIDDEN_LOCKFILE_BYTES = 32 * 1024 * 1024
/** Packages listed by name per tree (the rest counted; the hash covers all of them). */
export const MAX_LISTED_PACKAGES = 200
/** The search for Python distributions: folders read, how deep, entries read per folder. */
const MAX_FOLDERS = 2000
const MAX_DEPTH = 5
const MAX_ENTRIES_PER_FOLDER = 10_000
/** Folders of Python distributions recorded (a hostile install could make thousands). */
export const MAX_PYTHON_TREES = 20
/** Folders never searched: git's, and npm's (Python distributions are not installed there). */
const SKIPPED = new Set(['.git', 'node_modules'])

/** One resolved tree: where it is, its hash, and what it lists. */
export interface ResolvedTree {
  /** `npm`: the hidden lockfile; `python`: a folder of installed distributions. */
  kind: 'npm' | 'python'
  /** Relative to the workspace: the hidden lockfile, or the folder that holds the `*.dist-info`. */
  path: string
  /**
   * npm: SHA-256 of the hidden lockfile's bytes; python: of the freeze listing (`name==version`
   * lines, sorted, each ending in a newline). Null when it could not be read (see `note`).
   */
  sha256: string | null
  /** How many packages it lists (`name@version` for npm, `name==version` for Python). */
  total: number
  /** The first MAX_LISTED_PACKAGES of them, sorted. */
  packages: string[]
  note?: string
}

export interface ResolvedTrees {
  trees: ResolvedTree[]
  /** Set when the search stopped at a bound. */
  note?: string
}

/** A package name or version worth listing: printable, no spaces or markup, not too long. */
const NAME = /^(@[A-Za-z0-9._~-]+\/)?[A-Za-z0-9._~-]{1,214}$/
const VERSION = /^[A-Za-z0-9][A-Za-z0-9.+!_~-]{0,127}$/

/** npm's hidden lockfile and Python's distribution folders in `workspaceDir`, if any. */
export async function readResolvedTrees(
  workspaceDir: string,
  bounds: { maxFolders?: number } = {}
): Promise<ResolvedTrees> {
  const trees: ResolvedTree[] = []
  const npm = await readNpmHidden(workspaceDir)
  if (npm) trees.push(npm)
  const python = await findPythonSites(workspaceDir, bounds.maxFolders ?? MAX_FOLDERS)
  trees.push(...python.trees)
  return python.note !== undefined ? { trees, note: python.note } : { trees }
}

function listed(kind: ResolvedTree['kind'], rel: string, sha: string | null, all: string[]) {
  const sorted = [...new Set(all)].sort()
  return {
    kind,
    path: rel,
    sha256: sha,
    total: sorted.length,
    packages: sorted.slice(0, MAX_LISTED_PACKAGES)
  }
}

function leftOut(n: number): { note?: string } {
  return n > 0 ? { note: `${n} entries with unlisted names or versions left out` } : {}
}

async function readNpmHidden(root: string): Promise<ResolvedTree | null> {
  const read = await readInside(root, NPM_HIDDEN_LOCKFILE, MAX_HIDDEN_LOCKFILE_BYTES)
  const none = { kind: 'npm' as const, path: NPM_HIDDEN_LOCKFILE, total: 0, packages: [] }
  if (!read.ok) {
    if (read.reason === 'missing') return null
    return { ...none, sha256: null, note: read.detail }
  }
  if (read.truncated) return { ...none, sha256: null, note: 'larger than 32 MiB' }
  const sha = createHash('sha256').update(read.data).digest('hex')
  let doc: unknown
  try {
    doc = JSON.parse(read.data.toString('utf8'))
  } catch {
    return { ...none, sha256: sha, note: 'not valid JSON: packages not listed' }
  }
  const packages = isPlainObject(doc) ? doc.packages : undefined
  if (typeof packages !== 'object' || packages === null || Array.isArray(packages))
    return { ...none, sha256: sha, note: 'no "packages" object: packages not listed' }
  const names: string[] = []
  let bad = 0
  for (const [key, value] of Object.entries(packages as Record<string, unknown>)) {
    const at = key.lastIndexOf('node_modules/')
    if (at < 0) continue // the root project ("") or a workspace folder
    const name = key.slice(at + 'node_modules/'.length)
    const entry =
      typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
    const version = entry.link === true ? 'link' : entry.version
    if (!NAME.test(name) || typeof version !== 'string' || !VERSION.test(version)) {
      bad++
      continue
    }
    names.push(`${name}@${version}`)
  }
  return { ...listed('npm', NPM_HIDDEN_LOCKFILE, sha, names), ...leftOut(bad) }
}

/**
 * Breadth first from the workspace, without following symlinks (a directory entry's own type is
 * used, never a stat through it): every folder that holds `*.dist-info` folders is one tree, and
 * is not searched further.
 */
async function findPythonSites(
  root: string,
  maxFolders: number
): Promise<{ trees: ResolvedTree[]; note?: string }> {
  const trees: ResolvedTree[] = []
  const queue: { rel: string; depth: number }[] = [{ rel: '', depth: 0 }]
  let read = 0
  let cut = false
  while (queue.length > 0) {
    if (read >= maxFolders)
      return {
        trees,
        note: `searched the first ${maxFolders} folders for Python distributions; the rest was not searched`
      }
    if (trees.length >= MAX_PYTHON_TREES)
      return {
        trees,
        note: `recorded the first ${MAX_PYTHON_TREES} folders of Python distributions; the rest was not searched`
      }
    const { rel, depth } = queue.shift() as { rel: string; depth: number }
    read++
    const subdirs: string[] = []
    const dists: string[] = []
    let dir: fs.Dir
    try {
      dir = await fs.promises.opendir(path.join(root, rel))
    } catch {
      continue
    }
    let seen = 0
    try {
      for await (const entry of dir) {
        if (++seen > MAX_ENTRIES_PER_FOLDER) break
        if (!entry.isDirectory()) continue
        if (entry.name.endsWith('.dist-info')) dists.push(entry.name)
        else if (!SKIPPED.has(entry.name)) subdirs.push(entry.name)
      }
    } catch {
      // unreadable: nothing more from this folder
    }
    if (dists.length > 0) {
      let bad = 0
      const lines: string[] = []
      for (const d of dists) {
        const stem = d.slice(0, -'.dist-info'.length)
        const dash = stem.indexOf('-')
        const name = stem.slice(0, dash)
        const version = stem.slice(dash + 1)
        if (dash < 1 || !NAME.test(name) || name.startsWith('@') || !VERSION.test(version)) {
          bad++
          continue
        }
        lines.push(`${name}==${version}`)
      }
      const freeze = [...new Set(lines)].sort()
      const sha = createHash('sha256')
        .update(freeze.map((l) => `${l}\n`).join(''))
        .digest('hex')
      trees.push({ ...listed('python', rel, sha, freeze), ...leftOut(bad) })
      continue
    }
    if (depth >= MAX_DEPTH) continue
    // Never more queued than can still be read: the queue stays as bounded as the search.
    for (const s of subdirs.sort()) {
      if (read + queue.length >= maxFolders) {
        cut = true
        break
      }
      queue.push({ rel: rel === '' ? s : `${rel}/${s}`, depth: depth + 1 })
    }
  }
  trees.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return cut
    ? {
        trees,
        note: `searched the first ${maxFolders} folders for Python distributions; the rest was not searched`
      }
    : { trees }
}
