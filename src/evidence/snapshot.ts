import * as fs from 'node:fs'
import { displayPath } from '../git-listing.js'
import { NO_STAT_RECORD, recordedOid, statKey } from '../workspace/stat-record.js'
import type { StatKey, StatRecord } from '../workspace/stat-record.js'
import { objectIds, objectWriter, writeTrees } from './git-objects.js'
import type { TreeEntry } from './git-objects.js'
import { NO_IGNORE_RULES } from './ignore.js'
import type { IgnoreRules } from './ignore.js'
import { readWhole } from '../read-fd.js'

export interface SnapshotLimits {
  maxFiles: number
  maxBytes: number
}

export const DEFAULT_SNAPSHOT_LIMITS: SnapshotLimits = {
  maxFiles: 100_000,
  maxBytes: 1024 * 1024 * 1024
}

export interface SkippedEntry {
  path: string
  reason: 'fifo' | 'socket' | 'device' | 'git-dir' | 'limit' | 'path-limit'
}

/**
 * The deepest folder chain and the longest path (bytes, relative to the workspace) the snapshot
 * takes: deeper or longer entries are not taken (a `path-limit` violation), so the host never
 * builds a path the kernel refuses (PATH_MAX) and the rest of the change is kept.
 */
export const MAX_PATH_DEPTH = 128
export const MAX_PATH_BYTES = 2048

/** A path left out as build output (base `.gitignore` rules); folders end in `/`. */
export interface IgnoredEntry {
  path: string
  /** The matching rule and the file it is in. */
  rule: string
}

/** Ignored entries kept in the list (all are counted). */
export const MAX_IGNORED_LISTED = 1000

export interface Snapshot {
  tree: string
  files: number
  bytes: number
  skipped: SkippedEntry[]
  truncated: boolean
  /** Top-most ignored entries (an ignored folder is one entry, not looked into); capped. */
  ignored: IgnoredEntry[]
  /** How many ignored entries there were in all. */
  ignoredTotal: number
  /** Raw paths of all ignored entries (for carrying build output into a fresh copy). */
  ignoredRaw: Buffer[]
  /** Files and links read and hashed. */
  read: number
  /** Files and links whose blob id came from the workspace's stat record, unchanged. */
  reused: number
  /** Every file and link of `tree` (what `git ls-tree -r` of it lists). */
  entries: TreeEntry[]
}

interface Found {
  parts: Buffer[]
  rel: Buffer
  /** Absolute path as bytes (names that are not UTF-8 stay intact). */
  abs: Buffer
  kind: 'file' | 'link'
  executable: boolean
  size: number
  key: StatKey
}

/**
 * Records the workspace as a git tree in the private repository, reading it as hostile input:
 * `lstat` only (symlinks are stored as links, never followed), no FIFOs, sockets or devices
 * opened, `.git` folders the agent made are not taken, names kept as raw bytes. Blob and tree
 * objects are written directly (no `git add`, no index, so no attributes, filters or hooks
 * apply). A file is read and hashed unless `record` (the workspace's stat record, taken when we
 * wrote it) holds its path with the same device, inode, size, mode and ctime: the agent can set
 * mtimes, sizes and contents but not ctime (see `workspace/stat-record.ts`); mtime is never used.
 * Blobs already in `knownTree` (the base) are not written again.
 *
 * The file system is read with synchronous calls: for many small files this is several times
 * faster than a round trip through libuv's thread pool per call, and nothing else runs meanwhile.
 */
export async function snapshotWorkspace(
  dir: string,
  gitDir: string,
  limits: SnapshotLimits = DEFAULT_SNAPSHOT_LIMITS,
  knownTree?: string,
  rules: IgnoreRules = NO_IGNORE_RULES,
  record: StatRecord = NO_STAT_RECORD
): Promise<Snapshot> {
  const skipped: SkippedEntry[] = []
  const ignored: IgnoredEntry[] = []
  const ignoredRaw: Buffer[] = []
  let truncated = false
  // What the store holds already: from the stat record when it was taken of that same tree,
  // else listed by git while the walk below runs.
  const known =
    knownTree === undefined
      ? Promise.resolve(new Set<string>())
      : record.tree === knownTree && record.known !== undefined
        ? Promise.resolve(record.known)
        : objectIds(gitDir, knownTree)
  known.catch(() => undefined) // awaited below; not unhandled if the walk throws first

  // 1. Walk (lstat only), in a stable order.
  const found: Found[] = []
  const slash = Buffer.from('/')
  // `underIgnored`: inside an ignored folder that the base tree tracks files in (git still
  // tracks those; every untracked entry there is ignored).
  const walk = (rel: Buffer | undefined, parts: Buffer[], underIgnored: string | null): void => {
    const abs = rel === undefined ? Buffer.from(dir) : Buffer.concat([Buffer.from(dir + '/'), rel])
    const names = fs.readdirSync(abs, { encoding: 'buffer' }).sort((a, b) => Buffer.compare(a, b))
    for (const name of names) {
      const childRel = rel === undefined ? name : Buffer.concat([rel, slash, name])
      const childAbs = Buffer.concat([abs, slash, name])
      if (parts.length + 1 > MAX_PATH_DEPTH || childRel.length > MAX_PATH_BYTES) {
        skipped.push({ path: displayPath(childRel.subarray(0, 200)) + '…', reason: 'path-limit' })
        continue
      }
      if (name.toString('latin1') === '.git') {
        skipped.push({ path: displayPath(childRel), reason: 'git-dir' })
        continue
      }
      const st = fs.lstatSync(childAbs, { bigint: true })
      if (!rules.empty) {
        const key = childRel.toString('latin1')
        const tracked = rules.tracked(key)
        const rule = tracked
          ? null
          : (underIgnored ??
            rules.match(
              [...parts, name].map((b) => b.toString('latin1')),
              st.isDirectory()
            ))
        if (rule !== null) {
          if (ignored.length < MAX_IGNORED_LISTED)
            ignored.push({ path: displayPath(childRel) + (st.isDirectory() ? '/' : ''), rule })
          ignoredRaw.push(childRel)
          continue
        }
        if (st.isDirectory()) {
          // A tracked folder that the rules ignore: only its tracked entries are taken.
          const dirRule = !tracked
            ? null
            : (underIgnored ??
              rules.match(
                [...parts, name].map((b) => b.toString('latin1')),
                true
              ))
          walk(childRel, [...parts, name], dirRule)
          continue
        }
      } else if (st.isDirectory()) {
        walk(childRel, [...parts, name], null)
        continue
      }
      if (st.isFIFO() || st.isSocket() || st.isBlockDevice() || st.isCharacterDevice()) {
        const reason = st.isFIFO() ? 'fifo' : st.isSocket() ? 'socket' : 'device'
        skipped.push({ path: displayPath(childRel), reason })
        continue
      }
      found.push({
        parts: [...parts, name],
        rel: childRel,
        abs: childAbs,
        kind: st.isSymbolicLink() ? 'link' : 'file',
        executable: (st.mode & 0o100n) !== 0n,
        size: Number(st.size),
        key: statKey(st)
      })
    }
  }
  walk(undefined, [], null)

  // 2. Limits, in walk order; 3. read, hash and store what the stat record does not vouch for.
  const writeObject = objectWriter(gitDir, await known)
  const entries: TreeEntry[] = []
  let bytes = 0
  let total = 0
  let reused = 0
  for (const f of found) {
    if (entries.length >= limits.maxFiles || bytes + f.size > limits.maxBytes) {
      truncated = true
      skipped.push({ path: displayPath(f.rel), reason: 'limit' })
      continue
    }
    bytes += f.size
    const mode = f.kind === 'link' ? '120000' : f.executable ? '100755' : '100644'
    const unchanged = recordedOid(record, f.rel.toString('latin1'), f.key)
    if (unchanged !== undefined) {
      reused++
      total += f.size
      entries.push({ parts: f.parts, mode, oid: unchanged })
      continue
    }
    const data =
      f.kind === 'link' ? fs.readlinkSync(f.abs, { encoding: 'buffer' }) : readRegularFile(f.abs)
    total += data.length
    entries.push({ parts: f.parts, mode, oid: writeObject('blob', data) })
  }

  const tree = writeTrees(entries, writeObject)
  return {
    tree,
    files: entries.length,
    bytes: total,
    skipped,
    truncated,
    ignored,
    ignoredTotal: ignoredRaw.length,
    ignoredRaw,
    read: entries.length - reused,
    reused,
    entries
  }
}

/** Opens without following a final symlink and refuses anything that is not a regular file. */
function readRegularFile(p: Buffer): Buffer {
  const fd = fs.openSync(
    p,
    fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK
  )
  try {
    const st = fs.fstatSync(fd)
    if (!st.isFile()) throw new Error(`${p.toString('utf8')} is not a regular file`)
    return readWhole(fd, st.size)
  } finally {
    fs.closeSync(fd)
  }
}
